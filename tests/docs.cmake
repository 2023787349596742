# SPDX-License-Identifier: BSD-3-Clause
# The reference is complete: every TYPEJIT_* variable the library reads (with the default and
# values `typejit settings` prints), every counter of the stats line, every option of the typejit
# command and of halo3d and every knob of the test driver is documented (README index and docs/
# pages; tests/check_docs.py says what it checks).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_test(NAME docs_reference COMMAND ${Python3_EXECUTABLE}
           ${CMAKE_CURRENT_SOURCE_DIR}/check_docs.py ${PROJECT_SOURCE_DIR}
           $<TARGET_FILE:typejit_tool>)
  set_tests_properties(docs_reference PROPERTIES TIMEOUT 30 LABELS unit)
endif()

# Every message the docs quote as typejit's output is one the code can print
# (tests/check_messages.py says which quotes and how they are matched).
if(Python3_FOUND)
  add_test(NAME docs_messages COMMAND ${Python3_EXECUTABLE}
           ${CMAKE_CURRENT_SOURCE_DIR}/check_messages.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(docs_messages PROPERTIES TIMEOUT 30 LABELS unit)
endif()

# Every source file says its licence (tests/check_licence.py).
if(Python3_FOUND)
  add_test(NAME licence_lines COMMAND ${Python3_EXECUTABLE}
           ${CMAKE_CURRENT_SOURCE_DIR}/check_licence.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(licence_lines PROPERTIES TIMEOUT 30 LABELS unit)
endif()
