// The one script of the desk: "select every finding of this page" in the queue.
// Everything works without it; it is served from the desk itself, never fetched.
document.addEventListener("DOMContentLoaded", function () {
  var all = document.getElementById("select-page");
  if (!all) { return; }
  all.addEventListener("change", function () {
    document.querySelectorAll("input.pick").forEach(function (box) { box.checked = all.checked; });
  });
});
