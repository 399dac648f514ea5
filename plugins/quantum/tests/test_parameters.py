"""Parameter expressions: reading, linear arithmetic, printing that reads back, errors."""

import math

import pytest
from hypothesis import given, strategies as st

from mskernel_quantum.api import Parameter, ParameterError, ParameterExpression


@pytest.mark.parametrize("text,coeffs,const", [
    ("2*theta + 0.5", {"theta": 2.0}, 0.5),
    ("-phi/2", {"phi": -0.5}, 0.0),
    ("pi/4", {}, math.pi / 4),
    ("2*(a - b)*3 + 1", {"a": 6.0, "b": -6.0}, 1.0),
    ("theta*2 - 0.5 + theta", {"theta": 3.0}, -0.5),
    ("sin(pi/2)*x + 2^3 + 2**1", {"x": 1.0}, 10.0),
    ("1e-3*a - -a", {"a": 1.001}, 0.0),
    ("a - a", {}, 0.0),
])
def test_reading_linear_expressions(text, coeffs, const):
    expr = ParameterExpression.parse(text)
    assert dict(expr.coeffs) == pytest.approx(coeffs)
    assert expr.const == pytest.approx(const)


@pytest.mark.parametrize("text,message", [
    ("a*b", r"\(a\) \* \(b\) is not linear"),
    ("a^2", "a power of a parameter is not linear"),
    ("sin(a)", r"sin\(\) of a parameter is not linear"),
    ("1/(a - 1)", "is not linear"),
    ("a/0", "division by zero"),
    ("2 +", "expected a number, a name or '\\(', found 'the end' at column 4"),
    ("a $ b", "unexpected character '\\$' at column 3"),
    ("(a", "expected '\\)'"),
    ("sqrt(-1)", r"sqrt\(-1\) is undefined"),
    ("", "the expression is empty"),
])
def test_reading_errors_say_what_and_where(text, message):
    with pytest.raises(ParameterError, match=message):
        ParameterExpression.parse(text)


def test_arithmetic_evaluation_and_binding():
    theta, phi = Parameter("theta"), Parameter("phi")
    expr = 2 * theta + 0.5 - phi / 4
    assert str(expr) == "2*theta - 0.25*phi + 0.5"
    assert expr.names == ("theta", "phi")
    assert expr.evaluate({"theta": 1.0, "phi": 2.0}) == pytest.approx(2.0)
    assert expr.bind({"phi": 2.0}) == 2 * theta
    assert (1 - theta) == ParameterExpression({"theta": -1}, 1)
    assert ParameterExpression.coerce({"a": 2, "b": 1}) == 2 * Parameter("a") + Parameter("b")
    with pytest.raises(ParameterError, match="no value for parameter\\(s\\) phi"):
        expr.evaluate({"theta": 1.0})
    with pytest.raises(ParameterError, match="depends on theta"):
        _ = theta.value
    with pytest.raises(ParameterError, match="not linear"):
        _ = theta * phi


@pytest.mark.parametrize("bad", ["2x", "pi", "sin", 3])
def test_parameter_names_must_be_identifiers(bad):
    with pytest.raises(ParameterError, match="cannot name a parameter"):
        Parameter(bad)


@pytest.mark.parametrize("bad", [1j, True, None, [1.0]])
def test_coercion_refuses_non_real_values(bad):
    with pytest.raises(ParameterError):
        ParameterExpression.coerce(bad)


finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@given(st.dictionaries(st.sampled_from(["a", "b", "theta", "x_1"]), finite, max_size=4), finite)
def test_printed_form_reads_back_exactly(coeffs, const):
    expr = ParameterExpression(coeffs, const)
    assert ParameterExpression.parse(str(expr)) == expr
    assert ParameterExpression.from_dict(expr.to_dict()) == expr
