"""gpcbench: reproducible benchmark of Bayesian kernel classifiers."""

__version__ = "0.1.0"
