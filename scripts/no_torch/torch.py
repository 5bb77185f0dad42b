# Put first on PYTHONPATH by compare_peers.py: peers.py then skips its PyTorch rows (it catches
# ImportError), which take minutes and are not what the targets are measured against.
raise ImportError("PyTorch hidden by scripts/compare_peers.py")
