/* SPDX-License-Identifier: BSD-3-Clause */
/* Every cudaError_t of the runtime API, for cudaGetErrorName and cudaGetErrorString: name,
 * value and a description (generated from the enum cudaError of the CUDA 13.0 driver_types.h,
 * which CUDA 12.9 shares; a description is the name in words, some of them reworded). */
#ifndef TJ_TESTS_FAKECUDA_CUDART_ERRORS_H
#define TJ_TESTS_FAKECUDA_CUDART_ERRORS_H

#define RT_ERRORS(_X)                                                                              \
    _X(cudaSuccess, 0, "no error")                                                                 \
    _X(cudaErrorInvalidValue, 1, "invalid argument")                                               \
    _X(cudaErrorMemoryAllocation, 2, "out of memory")                                              \
    _X(cudaErrorInitializationError, 3, "initialization error")                                    \
    _X(cudaErrorCudartUnloading, 4, "the CUDA runtime is unloading")                               \
    _X(cudaErrorProfilerDisabled, 5, "profiler disabled")                                          \
    _X(cudaErrorProfilerNotInitialized, 6, "profiler not initialized")                             \
    _X(cudaErrorProfilerAlreadyStarted, 7, "profiler already started")                             \
    _X(cudaErrorProfilerAlreadyStopped, 8, "profiler already stopped")                             \
    _X(cudaErrorInvalidConfiguration, 9, "invalid configuration")                                  \
    _X(cudaErrorInvalidPitchValue, 12, "invalid pitch")                                            \
    _X(cudaErrorInvalidSymbol, 13, "invalid symbol")                                               \
    _X(cudaErrorInvalidHostPointer, 16, "invalid host pointer")                                    \
    _X(cudaErrorInvalidDevicePointer, 17, "invalid device pointer")                                \
    _X(cudaErrorInvalidTexture, 18, "invalid texture")                                             \
    _X(cudaErrorInvalidTextureBinding, 19, "invalid texture binding")                              \
    _X(cudaErrorInvalidChannelDescriptor, 20, "invalid channel descriptor")                        \
    _X(cudaErrorInvalidMemcpyDirection, 21, "invalid copy direction")                              \
    _X(cudaErrorAddressOfConstant, 22, "address of constant")                                      \
    _X(cudaErrorTextureFetchFailed, 23, "texture fetch failed")                                    \
    _X(cudaErrorTextureNotBound, 24, "texture not bound")                                          \
    _X(cudaErrorSynchronizationError, 25, "synchronization error")                                 \
    _X(cudaErrorInvalidFilterSetting, 26, "invalid filter setting")                                \
    _X(cudaErrorInvalidNormSetting, 27, "invalid norm setting")                                    \
    _X(cudaErrorMixedDeviceExecution, 28, "mixed device execution")                                \
    _X(cudaErrorNotYetImplemented, 31, "not yet implemented")                                      \
    _X(cudaErrorMemoryValueTooLarge, 32, "memory value too large")                                 \
    _X(cudaErrorStubLibrary, 34, "stub library")                                                   \
    _X(cudaErrorInsufficientDriver, 35, "the CUDA driver is older than this CUDA runtime")         \
    _X(cudaErrorCallRequiresNewerDriver, 36, "call requires newer driver")                         \
    _X(cudaErrorInvalidSurface, 37, "invalid surface")                                             \
    _X(cudaErrorDuplicateVariableName, 43, "duplicate variable name")                              \
    _X(cudaErrorDuplicateTextureName, 44, "duplicate texture name")                                \
    _X(cudaErrorDuplicateSurfaceName, 45, "duplicate surface name")                                \
    _X(cudaErrorDevicesUnavailable, 46, "devices unavailable")                                     \
    _X(cudaErrorIncompatibleDriverContext, 49, "incompatible driver context")                      \
    _X(cudaErrorMissingConfiguration, 52, "kernel launch without a launch configuration")          \
    _X(cudaErrorPriorLaunchFailure, 53, "prior launch failure")                                    \
    _X(cudaErrorLaunchMaxDepthExceeded, 65, "launch max depth exceeded")                           \
    _X(cudaErrorLaunchFileScopedTex, 66, "launch file scoped tex")                                 \
    _X(cudaErrorLaunchFileScopedSurf, 67, "launch file scoped surf")                               \
    _X(cudaErrorSyncDepthExceeded, 68, "sync depth exceeded")                                      \
    _X(cudaErrorLaunchPendingCountExceeded, 69, "launch pending count exceeded")                   \
    _X(cudaErrorInvalidDeviceFunction, 98, "invalid device function")                              \
    _X(cudaErrorNoDevice, 100, "no CUDA-capable device")                                           \
    _X(cudaErrorInvalidDevice, 101, "invalid device ordinal")                                      \
    _X(cudaErrorDeviceNotLicensed, 102, "device not licensed")                                     \
    _X(cudaErrorSoftwareValidityNotEstablished, 103, "software validity not established")          \
    _X(cudaErrorStartupFailure, 127, "startup failure")                                            \
    _X(cudaErrorInvalidKernelImage, 200, "invalid kernel image")                                   \
    _X(cudaErrorDeviceUninitialized, 201, "invalid device context")                                \
    _X(cudaErrorMapBufferObjectFailed, 205, "map buffer object failed")                            \
    _X(cudaErrorUnmapBufferObjectFailed, 206, "unmap buffer object failed")                        \
    _X(cudaErrorArrayIsMapped, 207, "array is mapped")                                             \
    _X(cudaErrorAlreadyMapped, 208, "already mapped")                                              \
    _X(cudaErrorNoKernelImageForDevice, 209, "no kernel image for the device")                     \
    _X(cudaErrorAlreadyAcquired, 210, "already acquired")                                          \
    _X(cudaErrorNotMapped, 211, "not mapped")                                                      \
    _X(cudaErrorNotMappedAsArray, 212, "not mapped as array")                                      \
    _X(cudaErrorNotMappedAsPointer, 213, "not mapped as pointer")                                  \
    _X(cudaErrorECCUncorrectable, 214, "ECC uncorrectable")                                        \
    _X(cudaErrorUnsupportedLimit, 215, "unsupported limit")                                        \
    _X(cudaErrorDeviceAlreadyInUse, 216, "device already in use")                                  \
    _X(cudaErrorPeerAccessUnsupported, 217, "peer access unsupported")                             \
    _X(cudaErrorInvalidPtx, 218, "invalid ptx")                                                    \
    _X(cudaErrorInvalidGraphicsContext, 219, "invalid graphics context")                           \
    _X(cudaErrorNvlinkUncorrectable, 220, "nvlink uncorrectable")                                  \
    _X(cudaErrorJitCompilerNotFound, 221, "jit compiler not found")                                \
    _X(cudaErrorUnsupportedPtxVersion, 222, "unsupported ptx version")                             \
    _X(cudaErrorJitCompilationDisabled, 223, "jit compilation disabled")                           \
    _X(cudaErrorUnsupportedExecAffinity, 224, "unsupported exec affinity")                         \
    _X(cudaErrorUnsupportedDevSideSync, 225, "unsupported dev side sync")                          \
    _X(cudaErrorContained, 226, "contained")                                                       \
    _X(cudaErrorInvalidSource, 300, "invalid source")                                              \
    _X(cudaErrorFileNotFound, 301, "file not found")                                               \
    _X(cudaErrorSharedObjectSymbolNotFound, 302, "shared object symbol not found")                 \
    _X(cudaErrorSharedObjectInitFailed, 303, "shared object init failed")                          \
    _X(cudaErrorOperatingSystem, 304, "operating system")                                          \
    _X(cudaErrorInvalidResourceHandle, 400, "invalid resource handle")                             \
    _X(cudaErrorIllegalState, 401, "illegal state")                                                \
    _X(cudaErrorLossyQuery, 402, "lossy query")                                                    \
    _X(cudaErrorSymbolNotFound, 500, "named symbol not found")                                     \
    _X(cudaErrorNotReady, 600, "device not ready")                                                 \
    _X(cudaErrorIllegalAddress, 700, "illegal memory access")                                      \
    _X(cudaErrorLaunchOutOfResources, 701, "launch out of resources")                              \
    _X(cudaErrorLaunchTimeout, 702, "launch timeout")                                              \
    _X(cudaErrorLaunchIncompatibleTexturing, 703, "launch incompatible texturing")                 \
    _X(cudaErrorPeerAccessAlreadyEnabled, 704, "peer access already enabled")                      \
    _X(cudaErrorPeerAccessNotEnabled, 705, "peer access not enabled")                              \
    _X(cudaErrorSetOnActiveProcess, 708, "set on active process")                                  \
    _X(cudaErrorContextIsDestroyed, 709, "context is destroyed")                                   \
    _X(cudaErrorAssert, 710, "assert")                                                             \
    _X(cudaErrorTooManyPeers, 711, "too many peers")                                               \
    _X(cudaErrorHostMemoryAlreadyRegistered, 712, "host memory already registered")                \
    _X(cudaErrorHostMemoryNotRegistered, 713, "host memory not registered")                        \
    _X(cudaErrorHardwareStackError, 714, "hardware stack error")                                   \
    _X(cudaErrorIllegalInstruction, 715, "illegal instruction")                                    \
    _X(cudaErrorMisalignedAddress, 716, "misaligned address")                                      \
    _X(cudaErrorInvalidAddressSpace, 717, "invalid address space")                                 \
    _X(cudaErrorInvalidPc, 718, "invalid pc")                                                      \
    _X(cudaErrorLaunchFailure, 719, "unspecified launch failure")                                  \
    _X(cudaErrorCooperativeLaunchTooLarge, 720, "cooperative launch too large")                    \
    _X(cudaErrorTensorMemoryLeak, 721, "tensor memory leak")                                       \
    _X(cudaErrorNotPermitted, 800, "not permitted")                                                \
    _X(cudaErrorNotSupported, 801, "operation not supported")                                      \
    _X(cudaErrorSystemNotReady, 802, "system not ready")                                           \
    _X(cudaErrorSystemDriverMismatch, 803, "system driver mismatch")                               \
    _X(cudaErrorCompatNotSupportedOnDevice, 804, "compat not supported on device")                 \
    _X(cudaErrorMpsConnectionFailed, 805, "mps connection failed")                                 \
    _X(cudaErrorMpsRpcFailure, 806, "mps rpc failure")                                             \
    _X(cudaErrorMpsServerNotReady, 807, "mps server not ready")                                    \
    _X(cudaErrorMpsMaxClientsReached, 808, "mps max clients reached")                              \
    _X(cudaErrorMpsMaxConnectionsReached, 809, "mps max connections reached")                      \
    _X(cudaErrorMpsClientTerminated, 810, "mps client terminated")                                 \
    _X(cudaErrorCdpNotSupported, 811, "cdp not supported")                                         \
    _X(cudaErrorCdpVersionMismatch, 812, "cdp version mismatch")                                   \
    _X(cudaErrorStreamCaptureUnsupported, 900, "stream capture unsupported")                       \
    _X(cudaErrorStreamCaptureInvalidated, 901, "stream capture invalidated")                       \
    _X(cudaErrorStreamCaptureMerge, 902, "stream capture merge")                                   \
    _X(cudaErrorStreamCaptureUnmatched, 903, "stream capture unmatched")                           \
    _X(cudaErrorStreamCaptureUnjoined, 904, "stream capture unjoined")                             \
    _X(cudaErrorStreamCaptureIsolation, 905, "stream capture isolation")                           \
    _X(cudaErrorStreamCaptureImplicit, 906, "stream capture implicit")                             \
    _X(cudaErrorCapturedEvent, 907, "captured event")                                              \
    _X(cudaErrorStreamCaptureWrongThread, 908, "stream capture wrong thread")                      \
    _X(cudaErrorTimeout, 909, "timeout")                                                           \
    _X(cudaErrorGraphExecUpdateFailure, 910, "graph exec update failure")                          \
    _X(cudaErrorExternalDevice, 911, "external device")                                            \
    _X(cudaErrorInvalidClusterSize, 912, "invalid cluster size")                                   \
    _X(cudaErrorFunctionNotLoaded, 913, "function not loaded")                                     \
    _X(cudaErrorInvalidResourceType, 914, "invalid resource type")                                 \
    _X(cudaErrorInvalidResourceConfiguration, 915, "invalid resource configuration")               \
    _X(cudaErrorUnknown, 999, "unknown error")                                                     \
    _X(cudaErrorApiFailureBase, 10000, "api failure base")

#endif /* TJ_TESTS_FAKECUDA_CUDART_ERRORS_H */
