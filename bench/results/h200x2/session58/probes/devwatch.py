# pytest plugin: reports each test after which the current CUDA device changed.
import pytest
@pytest.fixture(autouse=True)
def _device_watch(request):
    import cupy
    before = cupy.cuda.runtime.getDevice()
    yield
    after = cupy.cuda.runtime.getDevice()
    if after != before:
        print(f"\nDEVICE CHANGED {before} -> {after} by {request.node.nodeid}", flush=True)
