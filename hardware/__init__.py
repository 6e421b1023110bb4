"""Hardware facts capplan plans with: the GPU catalog (hardware/gpus.py, hardware/data/gpus.csv)."""
