"""The dense operations by name: the one table the dense API (ewise.add, ...) and the PyTorch
operators (ewise.torch.add, ...) define their functions from. The names are NumPy's (also the
C++ library's: ewise/ops.hpp), the short names of earlier releases aliases."""

# The functions each API defines: (name, what it computes). Semantics: ewise/ops.hpp.
FUNCTIONS = (
    ("add", "a + b"),
    ("subtract", "a - b (refused on bools, as NumPy and PyTorch refuse it)"),
    ("multiply", "a * b"),
    ("divide", "a / b, true division: integers and bools give a float (NumPy: float64; "
     "PyTorch: float32)"),
    ("floor_divide", "a // b, rounded toward -inf (integers: x // 0 is 0)"),
    ("remainder", "a % b with the divisor's sign (integers: x % 0 is 0)"),
    ("power", "a ** b"),
    ("minimum", "Element-wise minimum, NaN propagating, as numpy.minimum and torch.minimum"),
    ("maximum", "Element-wise maximum, NaN propagating, as numpy.maximum and torch.maximum"),
    ("fmin", "Element-wise minimum ignoring NaN, as numpy.fmin and torch.fmin"),
    ("fmax", "Element-wise maximum ignoring NaN, as numpy.fmax and torch.fmax"),
    ("equal", "a == b (bool)"),
    ("not_equal", "a != b (bool)"),
    ("less", "a < b (bool)"),
    ("less_equal", "a <= b (bool)"),
    ("greater", "a > b (bool)"),
    ("greater_equal", "a >= b (bool)"),
    ("logical_and", "a and b, on each operand's truth (bool)"),
    ("logical_or", "a or b, on each operand's truth (bool)"),
    ("logical_xor", "a xor b, on each operand's truth (bool)"),
    ("bitwise_and", "a & b (integers and bools)"),
    ("bitwise_or", "a | b (integers and bools)"),
    ("bitwise_xor", "a ^ b (integers and bools)"),
)

# The short names of earlier releases, each the function of that NumPy name.
ALIASES = {"sub": "subtract", "mul": "multiply", "div": "divide", "min": "minimum",
           "max": "maximum"}

NAMES = {**{name: name for name, _ in FUNCTIONS}, **ALIASES}


def op(name):
    """The NumPy name of an op the API accepts; ValueError for any other."""
    try:
        return NAMES[name]
    except (KeyError, TypeError):
        raise ValueError(f"ewise: unknown op {name!r}: expected one of {sorted(NAMES)}") \
            from None


def define(namespace, make):
    """Defines the table's functions and aliases in a module's namespace (its globals()): each
    is make(name), a function (a, b, out=None, kernel=None), named and documented here."""
    for name, what in FUNCTIONS:
        function = make(name)
        function.__code__ = function.__code__.replace(co_name=name)  # tracebacks name it
        function.__name__ = function.__qualname__ = name
        function.__module__ = namespace["__name__"]
        function.__doc__ = f"{what} (see binary)."
        namespace[name] = function
    for alias, name in ALIASES.items():
        namespace[alias] = namespace[name]
