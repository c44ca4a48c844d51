#include "gpu/torch_check.hpp"

namespace cd::gpu {

const char* torch_check_script() {
  return R"PY(
import json, sys, time

def emit(kind, obj):
    print(json.dumps({kind: obj}), flush=True)

def step(name, gpu, fn):
    emit("begin", name)
    t = time.time()
    try:
        detail = fn()
        emit("step", {"layer": "framework", "name": name, "status": "pass", "detail": detail,
                      "seconds": time.time() - t, "gpu": gpu})
        return True
    except Exception as e:
        msg = (type(e).__name__ + ": " + str(e)).strip().splitlines()
        emit("step", {"layer": "framework", "name": name, "status": "fail", "detail": " | ".join(msg[:3]),
                      "seconds": time.time() - t, "gpu": gpu,
                      "finding": "framework.import_failed" if name == "import torch" else ""})
        return False

mods = {}
def do_import():
    import torch
    mods["torch"] = torch
    return "torch %s (CUDA %s) from %s" % (torch.__version__, torch.version.cuda, torch.__file__)
if not step("import torch", "", do_import):
    sys.exit(1)
torch = mods["torch"]

def available():
    if torch.version.cuda is None:
        raise RuntimeError("CPU-only build of torch (torch.version.cuda is None)")
    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False (device_count %d)" % torch.cuda.device_count())
    n = torch.cuda.device_count()
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    try:
        nccl = ".".join(str(x) for x in torch.cuda.nccl.version())
    except Exception:
        nccl = "none"
    emit("value", ["torch_version", torch.__version__])
    emit("value", ["torch_cudnn", str(cudnn)])
    emit("value", ["torch_nccl", nccl])
    return "%d GPU%s, %s; cuDNN %s, NCCL %s" % (n, "" if n == 1 else "s", torch.cuda.get_device_name(0), cudnn, nccl)
if not step("torch.cuda.is_available", "all", available):
    sys.exit(1)

def matmul():
    torch.manual_seed(0)
    a = torch.randn(4096, 4096)
    b = torch.randn(4096, 4096)
    ref = a @ b
    got = (a.cuda() @ b.cuda()).cpu()
    err = ((got - ref).abs().max() / ref.abs().max()).item()
    tf32 = torch.backends.cuda.matmul.allow_tf32
    tol = 1e-2 if tf32 else 1e-4
    if not err <= tol:
        raise RuntimeError("4096^2 float32 matmul differs from the CPU: max relative error %.3g > %.0e" % (err, tol))
    return "4096^2 float32 matmul matches the CPU (max relative error %.1e%s)" % (err, ", TF32 on" if tf32 else "")
step("torch matmul vs CPU", "GPU 0", matmul)

def train(dev):
    def run():
        torch.manual_seed(1)
        nn = torch.nn
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                              nn.Linear(8 * 16 * 16, 10)).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(32, 3, 32, 32, device=dev)
        y = torch.randint(0, 10, (32,), device=dev)
        before = model[0].weight.detach().clone()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        torch.cuda.synchronize(dev)
        if not torch.isfinite(loss).item():
            raise RuntimeError("loss is not finite: %s" % loss.item())
        if torch.equal(before, model[0].weight.detach()):
            raise RuntimeError("optimizer step did not change the weights")
        return "tiny CNN forward + backward + SGD step (cuDNN conv), loss %.3f" % loss.item()
    return run
for i in range(torch.cuda.device_count()):
    step("torch CNN train step", "GPU %d" % i, train("cuda:%d" % i))
)PY";
}

}  // namespace cd::gpu
