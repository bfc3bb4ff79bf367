# ctest driver (cmake -P): installs the built ewise into WORK_DIR/prefix, configures and builds
# this consumer against it with find_package(ewise), and runs it.
# Inputs: BUILD_DIR, SOURCE_DIR, WORK_DIR, GENERATOR, MAKE_PROGRAM, CXX_COMPILER,
# CUDA_COMPILER, CUDA_ARCHITECTURES, CONFIG.
string(REPLACE "," ";" CUDA_ARCHITECTURES "${CUDA_ARCHITECTURES}")
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}"
                        --config "${CONFIG}"
                OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/build"
                        -G "${GENERATOR}" "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}"
                        "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_BUILD_TYPE=${CONFIG}"
                        "-DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}"
                        "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHITECTURES}"
                        "-DCMAKE_PREFIX_PATH=${prefix}"
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" --config "${CONFIG}"
                COMMAND_ERROR_IS_FATAL ANY)
# The program must come from the installed package, not the build tree.
file(STRINGS "${WORK_DIR}/build/CMakeCache.txt" found REGEX "^ewise_DIR:")
if(NOT found MATCHES "^ewise_DIR:PATH=${prefix}/")
  message(FATAL_ERROR "find_package(ewise) did not use the installed package: ${found}")
endif()
execute_process(COMMAND "${WORK_DIR}/build/ewise_consumer" COMMAND_ERROR_IS_FATAL ANY)
