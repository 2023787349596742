# SPDX-License-Identifier: BSD-3-Clause
# The type engine: IR, canonical passes, blocks, translation, CPU packer, the oracle.
tj_test_program(test_canon test_canon.c)
tj_add_test(canon COMMAND test_canon LABELS unit)
# The pool the type table keeps its records in (src/util/slab.c).
tj_test_program(test_slab test_slab.c)
tj_add_test(slab COMMAND test_slab LABELS unit)

tj_test_program(test_translate test_translate.c)
tj_add_test(translate COMMAND test_translate LABELS "unit;portable")
# A type's element, and the alignment its placements keep (the words `typejit warm` compiles).
tj_test_program(test_element test_element.c)
tj_add_test(element COMMAND test_element LABELS "unit;portable")

tj_test_program(test_oracle test_oracle.c region.c $<TARGET_OBJECTS:tj_randtype>)
tj_add_test(oracle COMMAND test_oracle --seed 1 --types 3000 LABELS "unit;portable" TIMEOUT 600)
# Half the levels made by the MPI-4 large-count constructors (`_c`), read back through
# MPI_Type_get_envelope_c/get_contents_c; skipped (77) on an MPI without them (Open MPI): label
# portable, which .ci/run runs in front of every MPI.
tj_add_test(oracle_large COMMAND test_oracle --seed 2 --types 1500 --large 50
            LABELS "unit;portable" TIMEOUT 600)

# The constructor wrappers against a fresh translation of the same committed handle. The program
# contains the interposer's sources itself, so its MPI_Type_* calls are the wrappers.
tj_test_program(test_constructors test_constructors.c ${TJ_INTERPOSE_SOURCES}
                $<TARGET_OBJECTS:tj_randtype>)
tj_add_test(constructors COMMAND test_constructors --seed 1 --types 3000 LABELS "unit;portable"
            TIMEOUT 300)
tj_add_test(constructors_large COMMAND test_constructors --seed 2 --types 1500 --large 50
            LABELS "unit;portable" TIMEOUT 300)
