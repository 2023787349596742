# SPDX-License-Identifier: BSD-3-Clause
# The GPU sweep (runs only where a CUDA device is present; exits 77 elsewhere).
add_executable(bench_gpu_pack ${CMAKE_CURRENT_LIST_DIR}/bench_gpu_pack.c)
target_link_libraries(bench_gpu_pack PRIVATE typejit_core)

# JIT and cache costs, on the CPU.
add_executable(bench_jit ${CMAKE_CURRENT_LIST_DIR}/bench_jit.c)
target_link_libraries(bench_jit PRIVATE typejit_core)
