"""DistributedDataParallel over the shoal backend (oshrun -n 1, 2, 4): every
PE ends with the same parameters, equal to one process training on all
ranks' data, and to the same run over gloo."""
import importlib.util
import os

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
import shoal.torch  # noqa: E402,F401

_spec = importlib.util.spec_from_file_location(
    "ddp_train", os.path.join(os.path.dirname(__file__), "..", "examples", "ddp_train.py"))
ddp_train = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ddp_train)

STEPS = 8


@pytest.fixture(scope="module", autouse=True)
def group():
    if not dist.is_initialized():
        dist.init_process_group("shoal")
    yield


def reference(world, steps, lr=0.1):
    """One process, the whole global batch: the mean of the ranks' gradients."""
    model = ddp_train.make_model()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        per_rank = []
        for r in range(world):
            x, y = ddp_train.batch(step, r)
            per_rank.append(torch.nn.functional.cross_entropy(model(x), y))
        loss = torch.stack(per_rank).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def test_ddp_parameters_agree():
    world = dist.get_world_size()
    losses, flat = ddp_train.train(dist.group.WORLD, STEPS)
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    for g in gathered:  # every PE holds the same model
        assert torch.allclose(g, gathered[0], rtol=0, atol=1e-6)
    ref_losses, ref_flat = reference(world, STEPS)
    assert losses == pytest.approx(ref_losses, rel=1e-5)
    assert torch.allclose(flat, ref_flat, rtol=1e-4, atol=1e-5)
    assert losses[-1] < losses[0]


def test_ddp_matches_gloo():
    gloo = dist.new_group(backend="gloo")
    ls, ps = ddp_train.train(dist.group.WORLD, STEPS)
    lg, pg = ddp_train.train(gloo, STEPS)
    assert ls == pytest.approx(lg, rel=1e-5)
    assert torch.allclose(ps, pg, rtol=1e-5, atol=1e-6)
