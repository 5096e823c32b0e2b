"""The GP estimators share one constructor set-up (``estimators.base``): scikit-learn's
get_params / set_params / clone must still see every parameter of every estimator."""

import inspect

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import (
    check_get_params_invariance,
    check_no_attributes_set_in_init,
    check_parameters_default_constructible,
    check_set_params,
)

from gpcbench.models import (
    EPGaussianProcessClassifier,
    EPGaussianProcessRegressor,
    LaplaceEMGaussianProcessClassifier,
    LaplaceGaussianProcessClassifier,
    MCMCGaussianProcessClassifier,
    MulticlassEPGaussianProcessClassifier,
    SoftmaxLaplaceGaussianProcessClassifier,
    VariationalGaussianProcessClassifier,
)

ESTIMATORS = [
    EPGaussianProcessClassifier,
    EPGaussianProcessRegressor,
    MulticlassEPGaussianProcessClassifier,
    LaplaceGaussianProcessClassifier,
    SoftmaxLaplaceGaussianProcessClassifier,
    LaplaceEMGaussianProcessClassifier,
    VariationalGaussianProcessClassifier,
    MCMCGaussianProcessClassifier,
]


def _changed_values(cls) -> dict:
    """A non-default value for every constructor parameter (types kept)."""
    out = {}
    for name, parameter in inspect.signature(cls).parameters.items():
        default = parameter.default
        if isinstance(default, bool):
            out[name] = not default
        elif isinstance(default, (int, float)):
            out[name] = default + 1
        elif default is None:
            out[name] = [True, False] if name == "discrete_features" else 7
        else:
            out[name] = default
    out["inverse_lengthscale"] = np.array([0.3, 0.4])
    return out


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_get_params_names_every_constructor_argument(cls):
    values = _changed_values(cls)
    estimator = cls(**values)
    params = estimator.get_params()
    assert set(params) == set(inspect.signature(cls).parameters)
    for name, value in values.items():
        assert params[name] is value


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_clone_and_set_params_round_trip(cls):
    values = _changed_values(cls)
    copy = clone(cls(**values))
    assert type(copy) is cls
    for name, value in copy.get_params().items():
        np.testing.assert_equal(value, values[name])
    reset = cls().set_params(**values)
    for name, value in reset.get_params().items():
        assert value is values[name]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_sklearn_parameter_checks(cls):
    name = cls.__name__
    check_parameters_default_constructible(name, cls())
    check_no_attributes_set_in_init(name, cls())
    check_get_params_invariance(name, cls())
    check_set_params(name, cls())


def test_covariance_parameters_are_documented():
    for cls in ESTIMATORS:
        doc = inspect.getdoc(cls)
        assert "{covariance_parameters}" not in doc
        assert "discrete_features" in doc and "theta0" in doc
