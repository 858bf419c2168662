/* cli_files.h: what the tools say of a file named on their command line that they cannot
   use, in one wording for all of them, before any work is done: the OS's reason
   (strerror) for an input that cannot be read or an output that cannot be created, and a
   directory given for a file said as such.  Not part of jitanon.h; POSIX.

       if (cli_file("symbolize", path, CLI_INPUT, "a recording (DIR/perf.data)") != 0) return 1;
       if (svg && cli_file("symbolize", svg, CLI_OUTPUT, NULL) != 0) return 1; */
#ifndef CLI_FILES_H
#define CLI_FILES_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef enum cli_use {
    CLI_INPUT,     /* a file to read ("-": standard input); a directory is refused, naming
                      `give`, what to give instead */
    CLI_OUTPUT,    /* a file to create or replace ("-": standard output): its directory
                      takes a new file (the tools write under a temporary name there and
                      rename), and it is no directory */
    CLI_OUTPUT_DIR /* a directory to create files in */
} cli_use;

/* 0 when `path` can be used so; else 1, said on stderr prefixed with `tool`. */
static int cli_file(const char *tool, const char *path, cli_use use, const char *give)
{
    struct stat sb;
    char dir[4096];
    const char *slash = strrchr(path, '/');
    int e = 0;
    if (use != CLI_OUTPUT_DIR && !strcmp(path, "-")) return 0;
    if (use == CLI_INPUT) {
        if (access(path, R_OK) != 0) return fprintf(stderr, "%s: cannot open %s: %s\n", tool, path, strerror(errno)), 1;
        if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            return fprintf(stderr, "%s: %s is a directory: give %s\n", tool, path, give), 1;
        return 0;
    }
    if (use == CLI_OUTPUT_DIR) {
        e = stat(path, &sb) != 0 ? errno : !S_ISDIR(sb.st_mode) ? ENOTDIR : access(path, W_OK | X_OK) != 0 ? errno : 0;
        if (e) fprintf(stderr, "%s: cannot write into %s: %s\n", tool, path, strerror(e));
        return e != 0;
    }
    /* a device or a FIFO (-o /dev/null) is written in place, needing no room beside it */
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) return 0;
    /* the directory: "x": "."; "/x": "/"; "d/x": "d" */
    snprintf(dir, sizeof dir, "%.*s", slash ? (slash == path ? 1 : (int)(slash - path)) : 1, slash ? path : ".");
    if (access(dir, W_OK) != 0)
        return fprintf(stderr, "%s: cannot write %s: %s: %s\n", tool, path, dir, strerror(errno)), 1;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return fprintf(stderr, "%s: cannot write %s: %s\n", tool, path, strerror(EISDIR)), 1;
    return 0;
}

#endif
