/* SPDX-License-Identifier: BSD-3-Clause */
/* `typejit cache`: maintain the kernel cache. */
#ifndef TJ_TOOLS_CACHE_H
#define TJ_TOOLS_CACHE_H

/* The command, argv[0] == "cache"; needs no MPI. Returns the exit status: 0, 1 (it could not do
 * all it says), 2 (usage). */
int tj_cache_run(int argc, char **argv);

/* The store warns about each problem it meets; where a command reports the problem itself
 * (tj_store_last_problem), the store's warning would say it twice. At the default level the
 * store is quiet between tj_cache_quiet and tj_cache_loud; TYPEJIT_LOG=info or debug still shows
 * everything. */
void tj_cache_quiet(void);
void tj_cache_loud(void);

#endif /* TJ_TOOLS_CACHE_H */
