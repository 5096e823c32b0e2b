"""Method families: each module registers its methods with gpcbench.experiments.registry."""
