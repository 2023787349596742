# SPDX-License-Identifier: BSD-3-Clause
# The kernel cache: key hashing, the on-disk store (validation, permissions, concurrent
# writers, manifest) and the in-memory table.
tj_test_program(test_hash test_hash.c)
tj_add_test(cache_hash COMMAND test_hash LABELS unit TIMEOUT 30)

tj_test_program(test_store test_store.c tempdir.c)
tj_add_test(cache_store COMMAND test_store LABELS unit TIMEOUT 60)

tj_test_program(test_store_concurrent test_store_concurrent.c tempdir.c)
tj_add_test(cache_store_concurrent COMMAND test_store_concurrent LABELS unit TIMEOUT 120)

tj_test_program(test_memo test_memo.c)
tj_add_test(cache_memo COMMAND test_memo LABELS unit TIMEOUT 60)

# Compile locks across processes, the TYPEJIT_CACHE_PATH search path, trimming.
tj_test_program(test_store_lock test_store_lock.c tempdir.c)
tj_add_test(cache_store_lock COMMAND test_store_lock LABELS unit TIMEOUT 120)

tj_test_program(test_store_set test_store_set.c tempdir.c)
tj_add_test(cache_store_set COMMAND test_store_set LABELS unit TIMEOUT 60)

tj_test_program(test_store_trim test_store_trim.c tempdir.c)
tj_add_test(cache_store_trim COMMAND test_store_trim LABELS unit TIMEOUT 60)
