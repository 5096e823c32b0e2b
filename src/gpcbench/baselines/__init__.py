"""Non-GP baselines of the papers' tables (thin layers over scikit-learn)."""
