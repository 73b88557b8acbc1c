# The CUDA part (docs/cuda.md): SHOAL_CUDA=AUTO turns it on when nvcc is
# found (not in sanitizer or fuzzer builds), ON requires it, OFF leaves it out. The library stays C11: its CUDA
# host code includes cuda_runtime_api.h and loads libcudart at run time;
# nvcc builds only the GPU tests, the example and the benchmark (sm_90
# code and compute_90 PTX).
#
# Debian 12's nvcc (11.8) refuses gcc 12: when the host compiler is not set,
# g++-11 is used if installed, else clang++-14 (what Debian's own nvcc
# wrapper suggests; clang-14 is installed for the fuzzers).
set(SHOAL_CUDA AUTO CACHE STRING "CUDA device API: AUTO (on when nvcc is found), ON or OFF")
set(SHOAL_HAVE_CUDA OFF)
# AUTO leaves sanitizer and fuzzer builds alone: their flags are not nvcc's.
if(SHOAL_CUDA STREQUAL "AUTO" AND (SHOAL_SANITIZE OR SHOAL_BUILD_FUZZERS))
  message(STATUS "CUDA part left out of this sanitizer/fuzzer build (SHOAL_CUDA=ON forces it)")
elseif(NOT SHOAL_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(SHOAL_NVCC nvcc)
    if(SHOAL_NVCC)
      set(CMAKE_CUDA_COMPILER ${SHOAL_NVCC} CACHE FILEPATH "CUDA compiler")
    endif()
  endif()
  if(CMAKE_CUDA_COMPILER AND NOT CMAKE_CUDA_HOST_COMPILER)
    execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --version OUTPUT_VARIABLE nvcc_version ERROR_QUIET)
    string(REGEX MATCH "release ([0-9]+)\\.([0-9]+)" _ "${nvcc_version}")
    if(CMAKE_MATCH_1 AND CMAKE_MATCH_1 LESS 12 AND CMAKE_C_COMPILER_ID STREQUAL "GNU"
       AND CMAKE_C_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
      find_program(SHOAL_CUDA_HOST NAMES g++-11 clang++-14 clang++-13)
      if(SHOAL_CUDA_HOST)
        set(CMAKE_CUDA_HOST_COMPILER ${SHOAL_CUDA_HOST} CACHE FILEPATH "nvcc's host compiler")
      endif()
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  set(shoal_cuda_arch_given "${CMAKE_CUDA_ARCHITECTURES}")
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND)
    set(SHOAL_HAVE_CUDA ON)
    if(NOT shoal_cuda_arch_given)
      set(CMAKE_CUDA_ARCHITECTURES 90-real 90-virtual CACHE STRING "GPU code to build: sm_90 and compute_90 PTX" FORCE)
    endif()
    set(CMAKE_CUDA_STANDARD 17)
    set(shoal_cuda_host "${CMAKE_CUDA_HOST_COMPILER}")
    if(NOT shoal_cuda_host)
      set(shoal_cuda_host "nvcc's default")
    endif()
    message(STATUS "CUDA ${CMAKE_CUDA_COMPILER_VERSION} (host compiler ${shoal_cuda_host}): "
                   "GPU heap and device API built for ${CMAKE_CUDA_ARCHITECTURES}")
  elseif(SHOAL_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SHOAL_CUDA=ON but no usable nvcc and CUDA toolkit (install nvidia-cuda-toolkit)")
  else()
    message(STATUS "CUDA not found (install nvidia-cuda-toolkit): no GPU heap or device API")
  endif()
endif()

# Compile options for nvcc: the host compiler's warnings, as errors. The
# project's C options (add_compile_options) are not nvcc's, so CUDA targets
# take these instead.
function(shoal_cuda_target target)
  get_target_property(opts ${target} COMPILE_OPTIONS)
  set_target_properties(${target} PROPERTIES COMPILE_OPTIONS "")
  foreach(o ${opts})
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:${o}>)
  endforeach()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-function --Werror=all-warnings>)
  # Static: the programs carry their runtime, as nvcc links them by default.
  target_link_libraries(${target} PRIVATE CUDA::cudart_static)
endfunction()
