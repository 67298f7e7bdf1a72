/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp-lease-allocate: get the API and ingress VIPs from the network's
 * DHCP server (clusters with vip_dhcp_allocation).
 *
 * Argument: DhcpAllocationRequest {"interface", "api_vip_mac",
 * "ingress_vip_mac", "api_vip_lease", "ingress_vip_lease"}. Output:
 * DhcpAllocationResponse {"api_vip_address", "api_vip_lease",
 * "ingress_vip_address", "ingress_vip_lease"}.
 *
 * For "api" then "ingress", as the Go agent (notes §6.8): a macvlan
 * (private mode) of that name on `interface` with the VIP's MAC; the lease
 * text of the request, if any, written to /etc/keepalived/lease-NAME with
 * its interface "..." naming the macvlan; `dhclient -v -H MAC-NAME -sf
 * /bin/true -lf /etc/keepalived/lease-NAME --no-pid -1 NAME` on the host
 * (MAC with dashes; 28 s at most); the last lease of the file and its
 * fixed-address; the macvlan deleted. Any failure: exit -1 and the error.
 * The two macvlan names are fixed, so requests run one after the other.
 *
 * dhclient -1 stays in the background once it holds a lease, renewing it
 * on an interface that is deleted right after: the Go agent leaves one
 * such daemon behind per VIP and request. Here dhclient writes a pid file
 * of ours instead of --no-pid, and SIGTERM (stop, no release) ends it
 * once the lease is read.
 */
#include <fcntl.h>
#include <netinet/ether.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "buf.h"
#include "cleanup.h"
#include "dhcp-lease.h"
#include "fileio.h"
#include "jsonutil.h"
#include "log.h"
#include "net-link.h"
#include "spawn.h"
#include "step-util.h"
#include "strutil.h"

#define LEASE_DIR "/etc/keepalived"
#define DHCLIENT_TIMEOUT_SECONDS 28
#define LEASE_FILE_MAX (1024u * 1024)
#define PID_FILE_WAIT_USEC (2 * USEC_PER_SEC)

/* Ends the dhclient that went to the background with a lease: SIGTERM,
 * which stops it without releasing the lease (what `dhclient -x` sends;
 * that command itself would also run DHCP on every interface). Its pid
 * file appears right after the foreground process exits. */
static void stop_daemon(const char *pid_file)
{
        _cleanup_free_ char *line = NULL, *comm_path = NULL, *comm = NULL;
        usec_t until = now_usec(CLOCK_MONOTONIC) + PID_FILE_WAIT_USEC;
        int pid = 0, r;

        for (;;) {
                r = read_one_line_file(pid_file, &line);
                if (r >= 0 || now_usec(CLOCK_MONOTONIC) >= until)
                        break;
                if (sleep_usec(50 * USEC_PER_MSEC) < 0)
                        break; /* a stop request: still end the daemon if it is there */
        }
        if (r < 0 || safe_atoi(strstrip(line), &pid) < 0 || pid <= 1) {
                log_warning("dhclient left no usable pid file %s: cannot stop it", pid_file);
                return;
        }
        /* the pid must still be that dhclient */
        comm_path = strdup_printf("/proc/%d/comm", pid);
        if (!comm_path || read_one_line_file(comm_path, &comm) < 0 || !streq(strstrip(comm), "dhclient"))
                return;
        if (kill(pid, SIGTERM) < 0)
                log_warning("cannot stop dhclient %d: %s", pid, strerror(errno));
}

/* A dhclient.conf sending host, in a new temporary file named in conf. */
static int write_config(const char *host, char *conf, size_t size)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *text = strdup_printf("send host-name \"%s\";\n", host);
        const char *p = text;
        size_t n;

        if (!text)
                return -ENOMEM;
        snprintf(conf, size, "/tmp/cradle-dhclient-XXXXXX");
        fd = mkostemp(conf, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (n = strlen(p); n > 0;) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        (void)unlink(conf);
                        return -errno;
                }
                p += k;
                n -= (size_t)k;
        }
        return 0;
}

static pthread_mutex_t allocate_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct Lease {
        char *address;
        char *lease;
} Lease;

static int lease_vip(const StepContext *ctx, const char *parent, const char *name, const char *mac_text,
                     const char *lease_text, Lease *ret, char **reterr)
{
        _cleanup_free_ char *file = strdup_printf(LEASE_DIR "/lease-%s", name);
        _cleanup_free_ char *host = NULL, *content = NULL, *last = NULL, *address = NULL, *pid_file = NULL;
        _cleanup_spawn_result_ SpawnResult res = {};
        char conf[] = "/tmp/cradle-dhclient-XXXXXX";
        bool daemon = false;
        struct ether_addr mac;
        int r;

        if (!file)
                return -ENOMEM;
        if (!ether_aton_r(mac_text, &mac)) {
                *reterr = strdup_printf("address %s: invalid MAC address", mac_text);
                return -EINVAL;
        }
        host = strdup_printf("%02x-%02x-%02x-%02x-%02x-%02x-%s", mac.ether_addr_octet[0],
                             mac.ether_addr_octet[1], mac.ether_addr_octet[2], mac.ether_addr_octet[3],
                             mac.ether_addr_octet[4], mac.ether_addr_octet[5], name);
        if (!host)
                return -ENOMEM;

        (void)link_delete(name); /* a leftover of an interrupted run */
        r = macvlan_create(parent, name, mac.ether_addr_octet);
        if (r < 0) {
                *reterr = strdup_printf("Failed to create macvlan %s on %s: %s", name, parent, strerror(-r));
                return r;
        }

        r = mkdir_p(LEASE_DIR, 0755);
        if (r >= 0 && !isempty(lease_text)) {
                _cleanup_free_ char *t = dhcp_lease_set_interface(lease_text, name);
                r = t ? write_file_atomic(file, t, strlen(t), 0644) : -ENOMEM;
        }
        if (r < 0) {
                *reterr = strdup_printf("Failed to save lease file %s: %s", file, strerror(-r));
                goto finish;
        }

        /* The Go agent passes "-H NAME", an option of Red Hat's dhclient
         * only; "send host-name" in a configuration file of our own sends
         * the same DHCP option with any ISC dhclient */
        r = write_config(host, conf, sizeof(conf));
        if (r < 0) {
                *reterr = strdup_printf("cannot write a dhclient configuration: %s", strerror(-r));
                goto finish;
        }
        pid_file = strdup_printf("%s.pid", conf);
        if (!pid_file) {
                (void)unlink(conf);
                r = -ENOMEM;
                goto finish;
        }
        {
                char *argv[] = {
                        (char *)"dhclient",  (char *)"-v",  (char *)"-cf", conf,          (char *)"-sf",
                        (char *)"/bin/true", (char *)"-lf", file,          (char *)"-pf", pid_file,
                        (char *)"-1",        (char *)name,  NULL
                };

                r = step_host_run(ctx, argv, DHCLIENT_TIMEOUT_SECONDS * USEC_PER_SEC, &res);
        }
        (void)unlink(conf);
        /* exit status 0: it holds a lease and went to the background */
        daemon = r >= 0 && !res.timed_out && res.exit_status == 0;
        if (r < 0) {
                *reterr =
                        strdup_printf("dhclient exited with non-zero exit code -1: %s",
                                      r == -ENOENT ? "exec: \"dhclient\": executable file not found in $PATH"
                                                   : strerror(-r));
                goto finish;
        }
        if (res.timed_out) {
                *reterr = strdup_printf("dhclient was timed out after %d seconds", DHCLIENT_TIMEOUT_SECONDS);
                r = -ETIMEDOUT;
                goto finish;
        }
        if (res.exit_status != 0) {
                *reterr = strdup_printf("dhclient exited with non-zero exit code %d: %s", res.exit_status,
                                        strempty(res.err));
                r = -EIO;
                goto finish;
        }

        r = read_full_file(file, LEASE_FILE_MAX, &content, NULL);
        if (r < 0) {
                *reterr = strdup_printf("Could not read lease file: %s", strerror(-r));
                goto finish;
        }
        r = dhcp_lease_last(content, &last);
        if (r < 0) {
                *reterr = strdup_printf("Failed to extract last lease from file %s", file);
                goto finish;
        }
        r = dhcp_lease_address(last, &address);
        if (r < 0) {
                *reterr = strdup_printf("Failed to find the address of the last lease in file %s", file);
                goto finish;
        }
        ret->address = TAKE_PTR(address);
        ret->lease = TAKE_PTR(last);
        r = 0;
finish : {
        int q;

        if (daemon)
                stop_daemon(pid_file);
        if (pid_file)
                (void)unlink(pid_file);
        q = link_delete(name);
        if (q < 0)
                log_error_errno(q, "deleteInterface: failed to delete link %s: %m", name);
}
        return r;
}

static int run(const StepContext *ctx, char *const *args, StepResult *ret)
{
        _cleanup_(json_object_putp) json_object *req = NULL, *resp = NULL;
        _cleanup_free_ char *err = NULL;
        Lease api = {}, ingress = {};
        const char *iface;
        int r;

        r = step_parse_arg(args[0], &model_dhcp_allocation_request, ret, &req);
        if (r <= 0)
                return r;
        iface = model_get_string(req, "interface");

        pthread_mutex_lock(&allocate_lock);
        r = lease_vip(ctx, iface, "api", model_get_string(req, "api_vip_mac"),
                      model_get_string(req, "api_vip_lease"), &api, &err);
        if (r >= 0)
                r = lease_vip(ctx, iface, "ingress", model_get_string(req, "ingress_vip_mac"),
                              model_get_string(req, "ingress_vip_lease"), &ingress, &err);
        pthread_mutex_unlock(&allocate_lock);

        if (r >= 0) {
                resp = json_new_object();
                if (!resp || json_add_string(resp, "api_vip_address", api.address) < 0 ||
                    json_add_string_nonempty(resp, "api_vip_lease", api.lease) < 0 ||
                    json_add_string(resp, "ingress_vip_address", ingress.address) < 0 ||
                    json_add_string_nonempty(resp, "ingress_vip_lease", ingress.lease) < 0)
                        r = -ENOMEM;
        }
        free(api.address);
        free(api.lease);
        free(ingress.address);
        free(ingress.lease);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_error("DhcpLeaseAllocate: %s", strna(err));
                return step_fail(ret, -1, "%s", strna(err));
        }
        return step_succeed_json(ret, resp);
}

const StepHandler step_dhcp_lease_allocate = {
        .type = STEP_DHCP_LEASE_ALLOCATE,
        .min_args = 1,
        .max_args = 1,
        .run = run,
};
