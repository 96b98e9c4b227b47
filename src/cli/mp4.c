/* animate's video (.mp4): the frames rasterized (io/anim.h) and piped to
 * ffmpeg, which writes the file (cli.h). */
#define _DEFAULT_SOURCE     /* strsep */
#define _XOPEN_SOURCE 700   /* fdopen */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../io/anim.h"

/* ffmpeg on the PATH */
int hs_cli_have_ffmpeg(void)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char *copy = strdup(path), *save = copy;
    int found = 0;
    for (char *dir; copy && !found && (dir = strsep(&save, ":"));) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s/ffmpeg", *dir ? dir : ".");
        found = access(buf, X_OK) == 0;
    }
    free(copy);
    return found;
}

/* ffmpeg reading raw frames on a pipe and writing tmp, started with
 * execvp (no shell: no quoting, no length limit), the name given as
 * file:NAME so that no name reads as an option (-x.mp4) or a URL
 * (tcp:..., x:y.mp4); SIGPIPE ignored while writing, so a reader that
 * goes away is a failed write (EPIPE), not the death of holosim with its
 * temporary file left. */
int hs_cli_write_mp4(const struct hs_anim *A, const char *tmp, size_t nframes, double t0,
                     double t1, double fps)
{
    char size[48], rate[48];
    snprintf(size, sizeof size, "%dx%d", A->width, A->height);
    snprintf(rate, sizeof rate, "%.6g", fps);
    size_t tl = strlen(tmp) + 6;
    char *target = malloc(tl);
    int fds[2];
    if (!target || pipe(fds) != 0) {
        free(target);
        return -1;
    }
    snprintf(target, tl, "file:%s", tmp);
    const char *argv[] = { "ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
                           "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", size, "-r", rate,
                           "-i", "pipe:0", "-an", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                           "-f", "mp4", target, NULL };
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[0], STDIN_FILENO);
        close(fds[0]);
        close(fds[1]);
        execvp("ffmpeg", (char *const *)argv);
        _exit(127);
    }
    close(fds[0]);
    free(target);
    if (pid < 0) {
        close(fds[1]);
        return -1;
    }
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    FILE *p = fdopen(fds[1], "wb");
    size_t sz = (size_t)A->width * (size_t)A->height * 3;
    unsigned char *rgb = malloc(sz);
    int rc = rgb && p ? 0 : -1;
    for (size_t k = 0; !rc && k < nframes && !hs_cli_interrupted; k++) {
        double t = k + 1 == nframes ? t1 : t0 + (t1 - t0) * (double)k / (double)(nframes - 1);
        hs_anim_raster(A, t, rgb);
        if (fwrite(rgb, 1, sz, p) != sz)
            rc = -1;
    }
    free(rgb);
    if (p ? fclose(p) != 0 : close(fds[1]) != 0)
        rc = -1;
    sigaction(SIGPIPE, &old, NULL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            st = -1;
            break;
        }
    return rc || hs_cli_interrupted || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ? -1 : 0;
}
