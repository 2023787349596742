# SPDX-License-Identifier: BSD-3-Clause
# test_gpu_race (gpu.cmake) builds the driver layer with ThreadSanitizer from its sources:
# src/gpu/cuda.c, named there, and the layer's other files, added here.
if(TARGET test_gpu_race)
  file(GLOB tj_gpu_race_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/gpu/*.c)
  list(REMOVE_ITEM tj_gpu_race_sources ${PROJECT_SOURCE_DIR}/src/gpu/cuda.c)
  target_sources(test_gpu_race PRIVATE ${tj_gpu_race_sources})
endif()
