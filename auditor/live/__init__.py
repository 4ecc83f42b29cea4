"""The live audit (`auditor watch`, docs/live.md): the landing folder watched, each batch
audited on its gaming day so far."""
