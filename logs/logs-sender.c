/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "assisted/assisted-models.h"
#include "assisted/assisted.h"
#include "buf.h"
#include "cleanup.h"
#include "fileio.h"
#include "goflags.h"
#include "hostexec.h"
#include "log.h"
#include "logs/journal-text.h"
#include "logs/logs-sender.h"
#include "targz.h"
#include "redact.h"
#include "shell.h"
#include "strutil.h"

#define DEFAULT_LOGS_DIR "/var/log"
#define DEFAULT_JOURNAL_DIR "/var/log/journal"
#define DEFAULT_SINCE "5 hours ago"
#define INSTALLER_GATHER "/usr/local/bin/installer-gather.sh"
#define OVS_GATHER "/usr/local/bin/ovs-installer-gather.sh"
#define INSTALLER_GATHER_ARCHIVE_PREFIX "/root/log-bundle-"

typedef struct Collector {
        const LogsSenderOptions *o;
        HostExec *host;
        char *dir; /* <logs_dir>/logs_host_<id> */
        usec_t since;
        bool since_valid;
        char **failures; /* report lines */
} Collector;

static void collector_done(Collector *c)
{
        free(c->dir);
        strv_free(c->failures);
}

_printf_(2, 3) static void failure(Collector *c, const char *fmt, ...)
{
        _cleanup_free_ char *text = NULL, *clean = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&text, fmt, ap) < 0)
                text = NULL;
        va_end(ap);
        if (!text)
                return;
        clean = redact_known_secrets(text);
        if (!clean)
                return;
        strstrip(clean);
        log_warning("logs: %s", clean);
        (void)strv_extend(&c->failures, clean);
}

static char *path_in(const Collector *c, const char *name)
{
        return strdup_printf("%s/%s", c->dir, name);
}

static int open_output(const Collector *c, const char *name)
{
        _cleanup_free_ char *p = path_in(c, name);

        int fd;

        if (!p)
                return -ENOMEM;
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
        return fd < 0 ? negative_errno() : fd;
}

static int write_str(int fd, const char *s)
{
        return write_all(fd, s, strlen(s));
}

static int run_host(Collector *c, char *const *argv, SpawnResult *ret)
{
        SpawnOptions so = { .argv = argv, .timeout = 10 * 60 * USEC_PER_SEC };

        return host_exec_run(c->host, &so, ret);
}

/* One section of mount.logs, as the Go agent's LogPrivilegedCommandOutput:
 * the description, the command line, then its stdout (or its stderr when
 * it failed). */
static void mount_section(Collector *c, int fd, const char *description, char *const *argv)
{
        _cleanup_spawn_result_ SpawnResult res = {};
        _cleanup_free_ char *words = strv_join(argv + 1, " ");
        int r;

        log_info("%s", description);
        (void)write_str(fd, description);
        (void)write_str(fd, "\n");
        (void)write_str(fd, argv[0]);
        (void)write_str(fd, " ");
        (void)write_str(fd, strempty(words));
        (void)write_str(fd, "\n");

        r = run_host(c, argv, &res);
        if (r < 0) {
                (void)write_str(fd, strerror(-r));
                (void)write_str(fd, "\n");
                failure(c, "%s failed: %s", argv[0], strerror(-r));
                return;
        }
        if (res.exit_status != 0 || res.err_len > 0) {
                (void)write_str(fd, strempty(res.err));
                (void)write_str(fd, "\n");
                failure(c, "%s failed: %d %s", argv[0], res.exit_status, strempty(res.err));
                return;
        }
        (void)write_str(fd, strempty(res.out));
        (void)write_str(fd, "\n");
}

static void collect_mounts(Collector *c)
{
        /* the Go agent passes "-o NAME,..." as one word, which lsblk reads
         * as a column list with a leading space; cradle passes two words */
        char *lsblk[] = {
                (char *)"lsblk", (char *)"-o",
                (char *)"NAME,MAJ:MIN,SIZE,TYPE,FSTYPE,KNAME,MODEL,UUID,WWN,HCTL,VENDOR,STATE,TRAN,PKNAME",
                NULL
        };
        char *findmnt[] = { (char *)"findmnt", (char *)"--df", NULL };
        char *by_id[] = { (char *)"ls", (char *)"-l", (char *)"/dev/disk/by-id", NULL };
        char *by_path[] = { (char *)"ls", (char *)"-l", (char *)"/dev/disk/by-path", NULL };
        char *pvdisplay[] = { (char *)"pvdisplay", (char *)"-v", NULL };
        char *vgdisplay[] = { (char *)"vgdisplay", (char *)"-v", NULL };
        char *lvdisplay[] = { (char *)"lvdisplay", (char *)"-v", NULL };
        _cleanup_close_ int fd = open_output(c, "mount.logs");

        if (fd < 0) {
                failure(c, "cannot create mount.logs: %s", strerror(-fd));
                return;
        }
        mount_section(c, fd, "List block devices", lsblk);
        mount_section(c, fd, "List mounts", findmnt);
        mount_section(c, fd, "Disk mapping by id", by_id);
        mount_section(c, fd, "Disk mapping by path", by_path);
        mount_section(c, fd, "Running pvdisplay", pvdisplay);
        mount_section(c, fd, "Running vgdisplay", vgdisplay);
        mount_section(c, fd, "Running lvdisplay", lvdisplay);
}

static void collect_journal(Collector *c, const char *file, JournalSelect select, const char *value)
{
        _cleanup_close_ int fd = -1;
        JournalQuery q = {
                .directory = c->o->journal_dir ? c->o->journal_dir : DEFAULT_JOURNAL_DIR,
                .select = select,
                .value = value,
                .since = c->since,
        };
        size_t n = 0;
        int r;

        log_info("collecting the journal%s%s into %s", value ? " of " : "", strempty(value), file);
        fd = open_output(c, file);
        if (fd < 0) {
                failure(c, "cannot create %s: %s", file, strerror(-fd));
                return;
        }
        if (!c->since_valid) {
                /* journalctl refuses the same way */
                _cleanup_free_ char *msg = strdup_printf("Failed to parse timestamp: %s\n",
                                                         c->o->since ? c->o->since : DEFAULT_SINCE);
                (void)write_str(fd, strempty(msg));
                failure(c, "journal for %s: cannot parse --since '%s'", file,
                        c->o->since ? c->o->since : DEFAULT_SINCE);
                return;
        }
        r = journal_write_text(&q, fd, &n);
        if (r < 0)
                failure(c, "cannot read the journal for %s: %s", file, strerror(-r));
        else
                log_debug("%zu journal entries in %s", n, file);
}

/* systemctl list-units shows the unit: its journal is worth collecting. */
static bool unit_listed(Collector *c, const char *unit)
{
        _cleanup_spawn_result_ SpawnResult res = {};
        char *argv[] = { (char *)"systemctl", (char *)"list-units", (char *)"--no-legend", (char *)unit,
                         NULL };

        if (run_host(c, argv, &res) < 0 || res.exit_status != 0)
                return false;
        return res.out && strstr(res.out, unit);
}

/* "dmesg -T": the kernel ring buffer with wall-clock times. */
static void collect_dmesg(Collector *c)
{
        _cleanup_close_ int out = -1, kmsg = -1;
        struct timespec now, boot;
        usec_t boot_realtime;
        char rec[8192];
        int r = 0;

        log_info("Running dmesg");
        out = open_output(c, "dmesg.logs");
        if (out < 0) {
                failure(c, "cannot create dmesg.logs: %s", strerror(-out));
                return;
        }
        kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (kmsg < 0) {
                failure(c, "cannot read the kernel log: %m");
                return;
        }
        clock_gettime(CLOCK_REALTIME, &now);
        clock_gettime(CLOCK_BOOTTIME, &boot);
        boot_realtime = ((usec_t)now.tv_sec * USEC_PER_SEC + (usec_t)now.tv_nsec / 1000) -
                        ((usec_t)boot.tv_sec * USEC_PER_SEC + (usec_t)boot.tv_nsec / 1000);

        for (;;) {
                ssize_t n = read(kmsg, rec, sizeof(rec) - 1);
                _cleanup_free_ char *line = NULL;
                char *semi, *msg, *end, when[64];
                uint64_t usec = 0;
                unsigned field = 0;
                time_t t;
                struct tm tm;

                if (n < 0) {
                        if (errno == EINTR || errno == EPIPE) /* EPIPE: a record was overwritten */
                                continue;
                        if (errno != EAGAIN)
                                r = negative_errno();
                        break;
                }
                if (n == 0)
                        break;
                rec[n] = 0;
                semi = strchr(rec, ';');
                if (!semi)
                        continue;
                *semi = 0;
                /* "prio,seq,usec,flags" */
                for (char *p = rec, *f; (f = strsep(&p, ",")); field++)
                        if (field == 2)
                                (void)safe_atou64(f, &usec);
                msg = semi + 1;
                /* the dictionary lines after the message start with a space */
                end = strchr(msg, '\n');
                if (end)
                        *end = 0;
                t = (time_t)((boot_realtime + usec) / USEC_PER_SEC);
                localtime_r(&t, &tm);
                strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
                line = strdup_printf("[%s] %s\n", when, msg);
                if (!line || write_str(out, line) < 0) {
                        r = -EIO;
                        break;
                }
        }
        if (r < 0)
                failure(c, "dmesg: %s", strerror(-r));
}

static void collect_coredumps(Collector *c)
{
        _cleanup_spawn_result_ SpawnResult res = {};
        _cleanup_strv_free_ char **lines = NULL;
        char *list[] = { (char *)"coredumpctl", (char *)"list", (char *)"--no-legend", NULL };

        log_info("Get coredump files");
        if (run_host(c, list, &res) < 0 || res.exit_status != 0) {
                log_info("Couldn't fetch coredump list: %s", strempty(res.err));
                return;
        }
        if (strv_split(strempty(res.out), "\n", &lines) < 0)
                return;
        STRV_FOREACH (l, lines) {
                _cleanup_strv_free_ char **fields = NULL;
                _cleanup_free_ char *out = NULL;
                _cleanup_spawn_result_ SpawnResult dres = {};
                const char *exe;

                if (strv_split(*l, " \t", &fields) < 0 || strv_length(fields) < 10)
                        continue;
                exe = strrchr(fields[9], '/') ? strrchr(fields[9], '/') + 1 : fields[9];
                out = strdup_printf("%s/coredump_exe_%s_pid_%s", c->dir, exe, fields[4]);
                if (!out)
                        return;
                {
                        char *dump[] = { (char *)"coredumpctl",
                                         (char *)"dump",
                                         fields[4],
                                         (char *)"--output",
                                         out,
                                         NULL };
                        if (run_host(c, dump, &dres) < 0 || dres.exit_status != 0) {
                                failure(c, "cannot read the coredump of PID %s: %s", fields[4],
                                        strempty(dres.err));
                                return;
                        }
                }
        }
}

/* The bootstrap's installer-gather.sh (after ovs-installer-gather.sh), and
 * its archive moved into our directory. */
static void collect_installer_gather(Collector *c)
{
        _cleanup_strv_free_ char **ips = NULL, **ovs = NULL, **gather = NULL;
        _cleanup_free_ char *archive = NULL;
        char id[32];
        time_t t = time(NULL);
        struct tm tm;

        localtime_r(&t, &tm);
        strftime(id, sizeof(id), "%Y%m%d%H%M%S", &tm);
        if (strv_split(strempty(c->o->masters_ips), ",", &ips) < 0)
                return;
        if (strv_extend(&ovs, OVS_GATHER) < 0 || strv_extend(&ovs, "--id") < 0 || strv_extend(&ovs, id) < 0)
                return;
        STRV_FOREACH (ip, ips)
                if (strv_extend(&ovs, *ip) < 0)
                        return;
        gather = strv_copy(ovs);
        if (!gather || free_and_strdup(&gather[0], INSTALLER_GATHER) < 0)
                return;

        for (int i = 0; i < 2; i++) {
                _cleanup_spawn_result_ SpawnResult res = {};
                char **argv = i == 0 ? ovs : gather;
                int r;

                log_info("Running %s", argv[0]);
                r = run_host(c, argv, &res);
                if (r < 0 || res.exit_status != 0 || res.err_len > 0)
                        failure(c, "failed to run %s: %s", argv[0],
                                r < 0 ? strerror(-r) : strempty(res.err));
        }

        archive = strdup_printf("%s%s.tar.gz", INSTALLER_GATHER_ARCHIVE_PREFIX, id);
        if (!archive)
                return;
        {
                _cleanup_spawn_result_ SpawnResult res = {};
                char *mv[] = { (char *)"mv", archive, c->dir, NULL };
                if (run_host(c, mv, &res) < 0 || res.exit_status != 0)
                        failure(c, "failed to: mv %s %s: %s", archive, c->dir, strempty(res.err));
        }
}

static int rm_rf_dir(const char *dir)
{
        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
                return errno == ENOENT ? 0 : negative_errno();
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (unlinkat(dirfd(d), de->d_name, 0) < 0 && errno == EISDIR) {
                        _cleanup_free_ char *sub = strdup_printf("%s/%s", dir, de->d_name);
                        if (sub)
                                (void)rm_rf_dir(sub);
                }
        }
        return rmdir(dir) < 0 ? negative_errno() : 0;
}

/* The directory into the archive, as "tar -czf ARCHIVE -C LOGS_DIR logs_host_X". */
static int archive_dir(const Collector *c, const char *archive, const char *top)
{
        _cleanup_close_ int fd = -1;
        _cleanup_(tar_writer_freep) TarWriter *t = NULL;
        _cleanup_free_ struct dirent **names = NULL;
        int n, r;

        fd = open(archive, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
        if (fd < 0)
                return negative_errno();
        r = tar_writer_new(fd, time(NULL), &t);
        if (r < 0)
                return r;
        r = tar_writer_add_dir(t, top, 0755);
        if (r < 0)
                return r;
        n = scandir(c->dir, &names, NULL, alphasort);
        if (n < 0)
                return negative_errno();
        for (int i = 0; i < n; i++) {
                _cleanup_free_ struct dirent *de = names[i];
                _cleanup_free_ char *path = NULL, *name = NULL;
                struct stat st;

                names[i] = NULL;
                if (r < 0 || streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                path = strdup_printf("%s/%s", c->dir, de->d_name);
                name = strdup_printf("%s/%s", top, de->d_name);
                if (!path || !name) {
                        r = -ENOMEM;
                        continue;
                }
                if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                r = tar_writer_add_file(t, name, path);
        }
        if (r < 0)
                return r;
        r = tar_writer_finish(t);
        if (r < 0)
                return r;
        return fsync(fd) < 0 ? negative_errno() : 0;
}

static void progress(AssistedClient *client, const LogsSenderOptions *o, const char *state)
{
        _cleanup_free_ char *err = NULL;
        int r;

        r = assisted_update_host_logs_progress(client, o->infra_env_id, o->host_id, state, NULL, &err);
        if (r < 0)
                log_error("failed to send log progress %s to service: %s", state, strna(err));
}

int logs_sender_run(const LogsSenderOptions *o, char **ret_report)
{
        _cleanup_(assisted_client_freep) AssistedClient *client = NULL;
        _cleanup_(host_exec_freep) HostExec *own_host = NULL;
        _cleanup_free_ char *archive = NULL, *top = NULL, *err = NULL, *report = NULL;
        const char *logs_dir = o->logs_dir ? o->logs_dir : DEFAULT_LOGS_DIR;
        Collector c = { .o = o, .host = o->host };
        AssistedClientOptions co = {
                .url = o->url,
                .ca_file = isempty(o->cacert) ? NULL : o->cacert,
                .insecure = o->insecure,
                .token = o->token,
                .agent_version = o->agent_version,
                .retry = o->retry ? *o->retry : HTTP_RETRY_GO_AGENT,
        };
        int r, upload_r;

        if (isempty(o->url) || isempty(o->cluster_id) || isempty(o->host_id))
                return -EINVAL;

        if (!c.host) {
                r = host_exec_new(HOST_EXEC_DIRECT, 0, &own_host);
                if (r < 0)
                        return r;
                c.host = own_host;
        }
        r = assisted_client_new(&co, &client, &err);
        if (r < 0) {
                log_error_errno(r, "cannot set up the service client: %s", strna(err));
                if (ret_report)
                        *ret_report = TAKE_PTR(err);
                return r;
        }

        progress(client, o, LOGS_STATE_REQUESTED);

        r = journal_since_parse(o->since ? o->since : DEFAULT_SINCE, now_usec(CLOCK_REALTIME), &c.since);
        c.since_valid = r >= 0;

        top = strdup_printf("logs_host_%s", o->host_id);
        c.dir = top ? strdup_printf("%s/%s", logs_dir, top) : NULL;
        archive = strdup_printf("%s/logs.tar.gz", logs_dir);
        if (!top || !c.dir || !archive) {
                collector_done(&c);
                return -ENOMEM;
        }
        log_info("Start gathering journalctl logs with tags [agent installer], services %s and "
                 "installer-gather",
                 o->bootstrap ? "[bootkube]" : "[]");
        r = mkdir_p(c.dir, 0755);
        if (r < 0) {
                log_error_errno(r, "Failed to create directory %s: %m", c.dir);
                collector_done(&c);
                return r;
        }

        collect_mounts(&c);
        collect_journal(&c, "agent.logs", JOURNAL_SELECT_TAG, "agent");
        collect_journal(&c, "installer.logs", JOURNAL_SELECT_TAG, "installer");
        if (unit_listed(&c, "ironic-agent.service"))
                collect_journal(&c, "ironic-agent.logs", JOURNAL_SELECT_UNIT, "ironic-agent");
        if (o->bootstrap)
                collect_journal(&c, "bootkube.logs", JOURNAL_SELECT_UNIT, "bootkube");
        if (o->installer_gather) {
                if (o->bootstrap)
                        collect_installer_gather(&c);
                collect_dmesg(&c);
                collect_coredumps(&c);
                collect_journal(&c, "journal.logs", JOURNAL_SELECT_ALL, NULL);
        }

        report = strv_join(c.failures, "\n");
        if (!report) {
                collector_done(&c);
                return -ENOMEM;
        }
        if (!isempty(report)) {
                _cleanup_free_ char *rp = path_in(&c, "report.logs"), *text = strdup_printf("%s\n", report);
                if (rp && text)
                        (void)write_file_atomic(rp, text, strlen(text), 0644);
        }

        progress(client, o, LOGS_STATE_COLLECTING);
        log_info("Archiving %s and creating %s", c.dir, archive);
        r = archive_dir(&c, archive, top);
        if (r < 0) {
                log_error_errno(r, "Failed to archive %s: %m", c.dir);
                upload_r = r;
        } else {
                free(err);
                err = NULL;
                upload_r = assisted_upload_logs(client, o->cluster_id, "host", o->host_id, o->infra_env_id,
                                                archive, NULL, &err);
                if (upload_r < 0)
                        log_error("Failed to upload file %s to assisted-service: %s", archive, strna(err));
                progress(client, o, LOGS_STATE_COMPLETED);
        }

        if (!o->dont_clean) {
                (void)rm_rf_dir(c.dir);
                (void)unlink(archive);
        }
        if (upload_r < 0 && err) {
                _cleanup_free_ char *joined =
                        isempty(report) ? strdup(err) : strdup_printf("%s\n%s", report, err);
                if (joined) {
                        free(report);
                        report = TAKE_PTR(joined);
                }
        }
        if (ret_report)
                *ret_report = TAKE_PTR(report);
        collector_done(&c);
        return upload_r;
}

/* Go's flag.Visit: was the flag set on the command line? argv[1..optind)
 * already parsed cleanly, so every word there is a flag or a flag's value. */
static bool flag_seen(const GoFlag flags[], int optind, char **argv, const char *name)
{
        for (int i = 1; i < optind; i++) {
                const char *a = argv[i], *n;
                size_t len;
                const GoFlag *f = NULL;

                if (streq(a, "--"))
                        break;
                n = a + 1 + (a[1] == '-');
                len = strcspn(n, "=");
                for (const GoFlag *g = flags; g->name; g++)
                        if (strlen(g->name) == len && strneq(g->name, n, len))
                                f = g;
                if (f && streq(f->name, name))
                        return true;
                /* a non-boolean flag without "=" takes the next word */
                if (f && f->type != GOFLAG_BOOL && n[len] != '=')
                        i++;
        }
        return false;
}

/* Wipes the token and frees what the flag parser allocated; returns status. */
static int verb_finish(const GoFlag flags[], char *token, int status)
{
        if (token)
                explicit_bzero(token, strlen(token));
        goflags_free(flags);
        return status;
}

int logs_sender_main(int argc, char **argv)
{
        _cleanup_free_ char *report = NULL;
        char *host_exec = NULL, *log_level = NULL;
        _cleanup_(host_exec_freep) HostExec *host = NULL;
        char *url = NULL, *cluster_id = NULL, *host_id = NULL, *infra_env_id = NULL, *token = NULL,
             *since = NULL, *masters_ips = NULL, *cacert = NULL, *force_id = NULL, *force_mac = NULL,
             *force_hostname = NULL, *forced_ipv4 = NULL, *marker = NULL, *logs_dir = NULL,
             *journal_dir = NULL;
        bool dont_clean = false, bootstrap = false, gather = false, insecure = false, journal_logging = true,
             text_logging = true, dry_run = false;
        double retry_delay = 2;
        int optind, r;
        const GoFlag flags[] = {
                { "url", GOFLAG_STRING, &url, NULL,
                  "The target URL, including a scheme and optionally a port (required)" },
                { "cluster-id", GOFLAG_STRING, &cluster_id, NULL, "The value of the cluster-id, required" },
                { "host-id", GOFLAG_STRING, &host_id, "host-id", "The value of the host-id" },
                { "infra-env-id", GOFLAG_STRING, &infra_env_id, NULL, "The value of the infra-env-id" },
                { "pull-secret-token", GOFLAG_STRING, &token, NULL,
                  "Pull secret token (default: $PULL_SECRET_TOKEN)" },
                { "since", GOFLAG_STRING, &since, DEFAULT_SINCE, "Journalctl since flag, same format" },
                { "dont-clean", GOFLAG_BOOL, &dont_clean, "false",
                  "Don't delete all created files on finish. Required" },
                { "bootstrap", GOFLAG_BOOL, &bootstrap, "false", "Gather and send logs on bootstrap node" },
                { "with-installer-gather-logging", GOFLAG_BOOL, &gather, "false",
                  "Use installer-gather logging" },
                { "masters-ips", GOFLAG_STRING, &masters_ips, NULL,
                  "list of ',' separated IPs of all masters nodes in the cluster for SSH use" },
                { "cacert", GOFLAG_STRING, &cacert, NULL, "Path to custom CA certificate in PEM format" },
                { "insecure", GOFLAG_BOOL, &insecure, "false", "Do not validate TLS certificate" },
                { "with-journal-logging", GOFLAG_BOOL, &journal_logging, "true", "Use journal logging" },
                { "with-text-logging", GOFLAG_BOOL, &text_logging, "true", "Use text logging" },
                { "dry-run", GOFLAG_BOOL, &dry_run, "false", "Dry run avoids/fakes certain actions",
                  "DRY_ENABLE", "DRYCONFIG_DRY_ENABLE" },
                { "force-id", GOFLAG_STRING, &force_id, NULL, "The fake host ID to give to the host",
                  "DRY_HOST_ID", "DRYCONFIG_DRY_HOST_ID" },
                { "force-mac", GOFLAG_STRING, &force_mac, NULL,
                  "The fake mac address to give to the first NIC", "DRY_FORCED_MAC_ADDRESS",
                  "DRYCONFIG_DRY_FORCED_MAC_ADDRESS" },
                { "force-hostname", GOFLAG_STRING, &force_hostname, NULL, "The fake hostname of the host",
                  "DRY_FORCED_HOSTNAME", "DRYCONFIG_DRY_FORCED_HOSTNAME" },
                { "forced-ipv4", GOFLAG_STRING, &forced_ipv4, NULL, "The fake IPv4 address of the host",
                  "DRY_FORCED_HOST_IPV4", "DRYCONFIG_DRY_FORCED_HOST_IPV4" },
                { "fake-reboot-marker-path", GOFLAG_STRING, &marker, NULL,
                  "A path whose existence indicates a fake reboot happened", "DRY_FAKE_REBOOT_MARKER_PATH",
                  "DRYCONFIG_DRY_FAKE_REBOOT_MARKER_PATH" },
                /* cradle's own */
                { "host-exec", GOFLAG_STRING, &host_exec, "auto",
                  "cradle: run host commands 'direct', 'enter' PID 1's namespaces, or 'auto'-detect",
                  "CRADLE_HOST_EXEC" },
                { "logs-dir", GOFLAG_STRING, &logs_dir, DEFAULT_LOGS_DIR,
                  "cradle: where logs_host_<id>/ and logs.tar.gz are made", "CRADLE_LOGS_DIR" },
                { "journal-dir", GOFLAG_STRING, &journal_dir, DEFAULT_JOURNAL_DIR,
                  "cradle: the journal directory to read (the local journal when it is missing)",
                  "CRADLE_JOURNAL_DIR" },
                { "transport-retry-delay", GOFLAG_DOUBLE, &retry_delay, "2",
                  "cradle: base delay in seconds of the HTTP transport's retries" },
                { "log-level", GOFLAG_STRING, &log_level, "info", "cradle: debug, info, warning or error",
                  "CRADLE_LOG_LEVEL" },
                {},
        };
        static const char *const required[] = { "host-id", "cluster-id", "url" };
        HttpRetryPolicy retry = HTTP_RETRY_GO_AGENT;
        HostExecMode mode;
        LogsSenderOptions o = {};

        r = goflags_parse("logs_sender", "Collects this host's logs and uploads them to assisted-service.",
                          flags, argc, argv, &optind);
        if (r <= 0)
                return verb_finish(flags, token, r == 0 ? 0 : 2);
        for (size_t i = 0; i < ELEMENTSOF(required); i++)
                if (!flag_seen(flags, optind, argv, required[i])) {
                        fprintf(stderr, "missing required -%s argument/flag\n", required[i]);
                        return verb_finish(flags, token, 2);
                }
        mode = host_exec_mode_from_string(host_exec);
        if (mode < 0 || log_level_from_string(log_level) < 0 || retry_delay < 0) {
                fprintf(stderr,
                        "logs_sender: invalid --host-exec, --log-level or --transport-retry-delay value\n");
                return verb_finish(flags, token, 2);
        }

        log_setup("logs-sender");
        log_set_max_level(log_level_from_string(log_level));
        log_set_default_targets(journal_logging ? LOG_TARGET_JOURNAL : 0,
                                text_logging ? 0 : LOG_TARGET_STDERR);
        log_set_field("TAG", "agent");
        log_set_field("DRY_AGENT_ID", dry_run ? strempty(force_id) : "");
        log_set_field("CRADLE_VERB", "logs_sender");
        if (text_logging) {
                _cleanup_free_ char *p = strdup_printf("%s/logs-sender.log", logs_dir);
                if (p && log_open_file(p) < 0)
                        log_warning("cannot open the text log %s, ignoring", p);
        }

        if (isempty(token) && getenv("PULL_SECRET_TOKEN"))
                (void)free_and_strdup(&token, getenv("PULL_SECRET_TOKEN"));
        if (!isempty(token))
                (void)redact_register_secret(token);

        r = host_exec_new(mode, HOST_NS_AGENT, &host);
        if (r < 0) {
                log_error_errno(r, "cannot set up host command execution: %m");
                return verb_finish(flags, token, 255);
        }
        retry.base_delay = (usec_t)(retry_delay * USEC_PER_SEC);
        retry.max_delay = MAX(retry.max_delay, retry.base_delay);

        o = (LogsSenderOptions){
                .url = url,
                .cluster_id = cluster_id,
                .host_id = host_id,
                .infra_env_id = infra_env_id,
                .token = token,
                .cacert = cacert,
                .insecure = insecure,
                .retry = &retry,
                .since = since,
                .bootstrap = bootstrap,
                .installer_gather = gather,
                .masters_ips = masters_ips,
                .dont_clean = dont_clean,
                .host = host,
                .logs_dir = logs_dir,
                .journal_dir = journal_dir,
        };
        r = logs_sender_run(&o, &report);
        if (r < 0) {
                printf("Failed to run send logs  %s\n", isempty(report) ? strerror(-r) : report);
                return verb_finish(flags, token, 255);
        }
        printf("Logs were sent\n%s\n", strempty(report));
        return verb_finish(flags, token, 0);
}
