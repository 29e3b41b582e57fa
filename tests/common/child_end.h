/* How a child process ended, in words, for tests that fork: "exited", "hung" (killed by its SIGALRM),
 * "killed by signal N (name)" or "exited with status N". */
#ifndef TB_CHILD_END_H
#define TB_CHILD_END_H

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static inline const char *tb_child_end(int status, char *text, size_t size)
{
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        snprintf(text, size, "hung");
    else if (WIFSIGNALED(status))
        snprintf(text, size, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WEXITSTATUS(status) != 0)
        snprintf(text, size, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(text, size, "exited");
    return text;
}

#endif /* TB_CHILD_END_H */
