"""The core: the Topic contract, data loading, sampling, the convergence gate and the agreement test. Imports nothing else from compare."""
