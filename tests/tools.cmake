# The `typejit` command's helpers: the type description parser.
tj_test_program(test_typedesc test_typedesc.c ${PROJECT_SOURCE_DIR}/src/tools/typedesc.c
                $<TARGET_OBJECTS:tj_randtype>)
target_include_directories(test_typedesc PRIVATE ${PROJECT_SOURCE_DIR}/src/tools)
tj_add_test(typedesc COMMAND test_typedesc LABELS unit TIMEOUT 120)

tj_add_test(tool LABELS jit TIMEOUT 300
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/test_tool.sh $<TARGET_FILE:typejit_tool>
          ${TJ_LIB} $<TARGET_FILE:halo3d> ${TJ_LAUNCH})
