/* SPDX-License-Identifier: BSD-3-Clause */
/* The staged buffers of split collectives in progress: a short list under a lock (one entry per
 * file handle with a staged _begin). */
#include "calls/file_split.h"

#include <pthread.h>
#include <stdlib.h>

#include "calls/state.h"

typedef struct tj_file_split_entry {
    MPI_File fh;
    tj_staged_t *s;
    struct tj_file_split_entry *next;
} entry_t;

bool tj_file_split_put(MPI_File fh, tj_staged_t *s)
{
    entry_t *e = malloc(sizeof(*e));
    if (e == NULL)
        return false;
    e->fh = fh;
    e->s = s;
    pthread_mutex_lock(&tj_calls_state.file_split.lock);
    e->next = tj_calls_state.file_split.entries;
    tj_calls_state.file_split.entries = e;
    pthread_mutex_unlock(&tj_calls_state.file_split.lock);
    return true;
}

tj_staged_t *tj_file_split_take(MPI_File fh)
{
    entry_t **at, *e = NULL;
    tj_staged_t *s = NULL;

    pthread_mutex_lock(&tj_calls_state.file_split.lock);
    for (at = &tj_calls_state.file_split.entries; *at != NULL; at = &(*at)->next)
        if ((*at)->fh == fh) {
            e = *at;
            *at = e->next;
            break;
        }
    pthread_mutex_unlock(&tj_calls_state.file_split.lock);
    if (e != NULL) {
        s = e->s;
        free(e);
    }
    return s;
}
