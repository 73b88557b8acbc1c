// shoal._torch: the Python face of the C++ parts (see shoal/torch/__init__.py).
#include <torch/extension.h>
#include <pybind11/chrono.h>
#include <torch/csrc/Dtype.h>

#include "process_group.hpp"
#include "symmetric.hpp"

namespace st = shoal_torch;

PYBIND11_MODULE(_torch, m) {
  m.doc() = "Shoal's PyTorch support: symmetric tensors and the 'shoal' torch.distributed backend";
  py::register_exception<st::ValueError>(m, "ShoalValueError", PyExc_ValueError);

  m.def("start", &st::ensure_started, "shmem_init unless already done; true if this call did it");
  m.def("stop", &st::stop_if_started_here, "shmem_finalize if start() did the init");
  m.def("my_pe", [] { return shmem_my_pe(); });
  m.def("n_pes", [] { return shmem_n_pes(); });
  m.def("local_pes", [] { return shmem_team_n_pes(SHMEM_TEAM_SHARED); });
  m.def("world_broadcast_i64", &st::world_broadcast_i64, py::arg("value"), py::arg("root"),
        py::call_guard<py::gil_scoped_release>());
  m.def("barrier_all", [] {
    std::lock_guard<std::mutex> g(st::shmem_lock());
    shmem_barrier_all();
  }, py::call_guard<py::gil_scoped_release>());

  m.def("empty", [](const std::vector<int64_t>& shape, py::object dtype) {
    if (!THPDtype_Check(dtype.ptr())) throw st::ValueError("shoal.torch.empty: dtype must be a torch.dtype");
    const at::ScalarType t = reinterpret_cast<THPDtype*>(dtype.ptr())->scalar_type;
    py::gil_scoped_release nogil;
    return st::empty(shape, t);
  }, py::arg("shape"), py::arg("dtype"));
  m.def("peer", &st::peer, py::arg("tensor"), py::arg("pe"));
  m.def("free", &st::free_now, py::arg("tensor"), py::call_guard<py::gil_scoped_release>());
  m.def("collect", &st::collect, py::call_guard<py::gil_scoped_release>());
  m.def("is_symmetric", &st::is_symmetric, py::arg("tensor"));
  m.def("live_allocations", &st::live_allocations);

  m.def("create_process_group", &st::ProcessGroupShoal::create, py::arg("store"), py::arg("rank"), py::arg("size"),
        py::arg("timeout"), py::call_guard<py::gil_scoped_release>());
}
