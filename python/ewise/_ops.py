"""The dense operations by name: the one table the dense API (ewise.add, ...) and the PyTorch
operators (ewise.torch.add, ...) define their functions from."""

# The ops by the names the Python API accepts: NumPy's for min and max, the C++ ones too.
NAMES = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "min": "min", "max": "max",
         "minimum": "min", "maximum": "max"}

# The functions each API defines: (name, op by its C++ name, what it computes).
FUNCTIONS = (("add", "add", "a + b"), ("sub", "sub", "a - b"), ("mul", "mul", "a * b"),
             ("div", "div", "a / b (integers truncate, x / 0 is 0)"),
             ("minimum", "min", "Element-wise minimum, NaN propagating, as numpy.minimum and "
              "torch.minimum (its gradient too)"),
             ("maximum", "max", "Element-wise maximum, NaN propagating, as numpy.maximum and "
              "torch.maximum (its gradient too)"))


def op(name):
    """The C++ name of an op the API accepts; ValueError for any other."""
    try:
        return NAMES[name]
    except (KeyError, TypeError):
        raise ValueError(f"ewise: unknown op {name!r}: expected one of {sorted(NAMES)}") \
            from None


def define(namespace, make):
    """Defines the table's functions in a module's namespace (its globals()): each is
    make(op), a function (a, b, out=None, kernel=None), named and documented here."""
    for name, cpp_name, what in FUNCTIONS:
        function = make(cpp_name)
        function.__code__ = function.__code__.replace(co_name=name)  # tracebacks name it
        function.__name__ = function.__qualname__ = name
        function.__module__ = namespace["__name__"]
        function.__doc__ = f"{what} (see binary)."
        namespace[name] = function
