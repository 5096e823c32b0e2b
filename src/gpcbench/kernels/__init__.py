"""The prior covariances of the package, the one place their math lives.

* :mod:`~gpcbench.kernels.covariance`: the :class:`CovarianceFunction` protocol and the
  covariance of K&G eqs. 13-14 with its gradients (EP, Laplace, variational, MCMC-GPC);
* :mod:`~gpcbench.kernels.multiclass`: the multiclass priors built on it, K&G eq. 43's class
  differences and W&B eq. 12's per-class softmax blocks;
* :mod:`~gpcbench.kernels.rbf`: the ZDJ kernel exp(-sum_l (x_l - x'_l)^2 / theta_l^2), numba
  compiled, its width derivatives and ZDJ sec. 5.1's default width (the ZDJ samplers, the BSVM,
  FIC);
* :mod:`~gpcbench.kernels.fic`: the FIC sparse prior of Snelson & Ghahramani (2006) on that
  kernel and the algebra of its Gaussian-site posterior (FIC EP and FIC Gibbs).

They import only the numerical core (``jit``, ``gaussian``); everything above may import them.
"""
