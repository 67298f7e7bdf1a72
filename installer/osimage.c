/* SPDX-License-Identifier: Apache-2.0 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "gzip.h"
#include "http.h"
#include "ignition/ignition.h"
#include "installer/plan.h"
#include "installer/osimage.h"
#include "jsonutil.h"
#include "strutil.h"

#define ENCAPSULATED_MC "/etc/ignition-machine-config-encapsulated.json"
#define MCS_ACCEPT "Accept: application/vnd.coreos.ignition+json; version=3.4.0"
#define AUTHFILE "/root/.docker/config.json"

void machine_config_info_done(MachineConfigInfo *m)
{
        free(m->os_image_url);
        strv_free(m->kernel_arguments);
        *m = (MachineConfigInfo){};
}

static void set_err(char **reterr, char *msg)
{
        if (reterr) {
                free(*reterr);
                *reterr = msg;
        } else
                free(msg);
}

int skipmco_pointer_source(const char *ignition, size_t len, char **ret_source, char **ret_ca_pem,
                           char **reterr)
{
        _cleanup_ign_config_ IgnConfig *c = NULL;
        _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
        _cleanup_free_ char *source = NULL, *ca = NULL;
        int r;

        r = ign_config_parse(ignition, len, 0, &c, &report);
        if (r < 0) {
                _cleanup_free_ char *text = ign_report_format(&report);
                set_err(reterr, strdup_printf("cannot parse the written ignition config: %s", strna(text)));
                return r;
        }
        if (c->ignition.config.n_merge == 0 || isempty(c->ignition.config.merge[0].source)) {
                set_err(reterr, strdup("the ignition config merges no other config"));
                return -ENOENT;
        }
        source = strdup(c->ignition.config.merge[0].source);
        if (!source)
                return -ENOMEM;
        if (c->ignition.security.tls.n_certificate_authorities > 0 &&
            !isempty(c->ignition.security.tls.certificate_authorities[0].source)) {
                _cleanup_free_ void *pem = NULL;
                _cleanup_free_ char *derr = NULL;
                size_t pem_len = 0;
                r = ign_data_url_decode(c->ignition.security.tls.certificate_authorities[0].source, &pem,
                                        &pem_len, &derr);
                if (r < 0) {
                        set_err(reterr, strdup_printf("cannot decode the CA of the ignition config: %s",
                                                      strna(derr)));
                        return r;
                }
                ca = strndup(pem, pem_len);
                if (!ca)
                        return -ENOMEM;
        }
        *ret_source = TAKE_PTR(source);
        if (ret_ca_pem)
                *ret_ca_pem = TAKE_PTR(ca);
        return 0;
}

int skipmco_parse_mcs_config(const char *data, size_t len, MachineConfigInfo *ret, char **reterr)
{
        _cleanup_ign_config_ IgnConfig *c = NULL;
        _cleanup_(ign_report_donep) IgnReport report = IGN_REPORT_INIT;
        _cleanup_(json_object_putp) json_object *mc = NULL;
        _cleanup_free_ void *file = NULL;
        _cleanup_free_ char *err = NULL;
        MachineConfigInfo m = {};
        json_object *spec, *kargs;
        size_t file_len = 0;
        int r;

        r = ign_config_parse(data, len, 0, &c, &report);
        if (r < 0) {
                _cleanup_free_ char *text = ign_report_format(&report);
                set_err(reterr,
                        strdup_printf("cannot parse the machine config server's config: %s", strna(text)));
                return r;
        }
        r = ign_config_extract_file(c, ENCAPSULATED_MC, BUF_MAX_JSON_DOC, &file, &file_len, &err);
        if (r < 0) {
                set_err(reterr,
                        strdup_printf("no %s in the machine config: %s", ENCAPSULATED_MC, strna(err)));
                return r;
        }
        free(err);
        err = NULL;
        r = json_parse(file, file_len, BUF_MAX_JSON_DOC, &mc, &err);
        if (r < 0) {
                set_err(reterr, strdup_printf("%s is not JSON: %s", ENCAPSULATED_MC, strna(err)));
                return r;
        }
        spec = json_get(mc, "spec");
        if (isempty(json_get_string(spec, "osImageURL"))) {
                set_err(reterr, strdup_printf("%s has no spec.osImageURL", ENCAPSULATED_MC));
                return -ENOENT;
        }
        m.os_image_url = strdup(json_get_string(spec, "osImageURL"));
        if (!m.os_image_url)
                return -ENOMEM;
        kargs = json_get(spec, "kernelArguments");
        if (kargs && json_object_is_type(kargs, json_type_array))
                for (size_t i = 0; i < json_object_array_length(kargs); i++) {
                        json_object *k = json_object_array_get_idx(kargs, i);
                        if (json_object_is_type(k, json_type_string) &&
                            strv_extend(&m.kernel_arguments, json_object_get_string(k)) < 0) {
                                machine_config_info_done(&m);
                                return -ENOMEM;
                        }
                }
        *ret = m;
        return 0;
}

int skipmco_fetch(const char *ignition, size_t len, MachineConfigInfo *ret, char **reterr)
{
        _cleanup_free_ char *source = NULL, *ca = NULL;
        int r;

        r = skipmco_pointer_source(ignition, len, &source, &ca, reterr);
        if (r < 0)
                return r;

        if (startswith(source, "data:")) {
                _cleanup_free_ void *raw = NULL;
                _cleanup_free_ char *derr = NULL;
                _cleanup_free_ void *text = NULL;
                size_t raw_len = 0, text_len = 0;
                r = ign_data_url_decode(source, &raw, &raw_len, &derr);
                if (r < 0) {
                        set_err(reterr, strdup_printf("cannot decode the merged config: %s", strna(derr)));
                        return r;
                }
                /* a gzip stream starts 1f 8b */
                if (raw_len >= 2 && ((unsigned char *)raw)[0] == 0x1f && ((unsigned char *)raw)[1] == 0x8b) {
                        r = gzip_decompress(raw, raw_len, BUF_MAX_JSON_DOC, &text, &text_len);
                        if (r < 0) {
                                set_err(reterr, strdup("cannot gunzip the merged config"));
                                return r;
                        }
                        return skipmco_parse_mcs_config(text, text_len, ret, reterr);
                }
                return skipmco_parse_mcs_config(raw, raw_len, ret, reterr);
        }

        {
                _cleanup_(http_client_freep) HttpClient *http = NULL;
                _cleanup_http_response_ HttpResponse resp = {};
                _cleanup_free_ char *err = NULL;
                char *const headers[] = { (char *)MCS_ACCEPT, NULL };
                HttpClientOptions ho = { .ca_pem = ca,
                                         .connect_timeout = 30 * USEC_PER_SEC,
                                         .total_timeout = 5 * 60 * USEC_PER_SEC };
                HttpRequest req = { .method = "GET", .path = source, .headers = headers };

                r = http_client_new(&ho, &http, &err);
                if (r < 0) {
                        set_err(reterr, TAKE_PTR(err));
                        return r;
                }
                r = http_request(http, &req, &resp, &err);
                if (r < 0) {
                        set_err(reterr, TAKE_PTR(err));
                        return r;
                }
                if (resp.status != 200) {
                        set_err(reterr, strdup_printf("GET %s: status %ld", source, resp.status));
                        return -EREMOTEIO;
                }
                return skipmco_parse_mcs_config(resp.body, resp.body_len, ret, reterr);
        }
}

char *cmdline_platform_id(const char *cmdline)
{
        _cleanup_strv_free_ char **words = NULL;

        if (strv_split(strempty(cmdline), " \t\n", &words) < 0)
                return NULL;
        STRV_FOREACH (w, words) {
                const char *v = startswith(*w, "ignition.platform.id=");
                if (v && !isempty(v))
                        return strdup(v);
        }
        return strdup("metal");
}

char **installer_args_append_kargs(char *const *installer_args)
{
        _cleanup_strv_free_ char **l = NULL;
        size_t n = strv_length(installer_args);

        for (size_t i = 0; i < n; i++)
                if (streq(installer_args[i], "--append-karg") && i + 1 < n) {
                        if (strv_extend(&l, installer_args[i + 1]) < 0)
                                return NULL;
                        i++;
                }
        if (!l)
                return calloc(1, sizeof(char *));
        return TAKE_PTR(l);
}

/* Appends one argv made of the NULL-terminated words. */
static int plan_add(char ****plan, size_t *n, const char *const *words)
{
        _cleanup_strv_free_ char **argv = NULL;
        char ***g;

        for (size_t i = 0; words[i]; i++)
                if (strv_extend(&argv, words[i]) < 0)
                        return -ENOMEM;
        g = realloc(*plan, (*n + 2) * sizeof(char **));
        if (!g)
                return -ENOMEM;
        *plan = g;
        g[(*n)++] = TAKE_PTR(argv);
        g[*n] = NULL;
        return 0;
}

#define ADD(...) \
        do { \
                const char *const _w[] = { __VA_ARGS__, NULL }; \
                if (plan_add(&plan, &n, _w) < 0) \
                        goto oom; \
        } while (0)

int overwrite_os_image_plan(const OverwritePlanInput *in, char ****ret)
{
        _cleanup_free_ char *root = NULL, *boot = NULL, *boot_dir = NULL, *imgref = NULL, *platform = NULL;
        _cleanup_strv_free_ char **deploy = NULL;
        char ***plan = NULL;
        size_t n = 0;

        if (streq_ptr(in->machine, "s390x")) {
                *ret = NULL;
                return 0;
        }
        root = partition_path(in->device, 4);
        boot = partition_path(in->device, 3);
        boot_dir = strdup_printf("%s/boot", in->mount_dir);
        imgref = strdup_printf("ostree-unverified-registry:%s", in->os_image_url);
        platform = strdup_printf("ignition.platform.id=%s", in->platform_id ? in->platform_id : "metal");
        if (!root || !boot || !boot_dir || !imgref || !platform)
                goto oom;

        ADD("mount", root, in->mount_dir);
        ADD("mount", boot, boot_dir);
        ADD("growpart", in->device, "4");
        ADD("xfs_growfs", in->mount_dir);
        ADD("setenforce", "0");
        {
                const char *words[] = { "ostree",      "container",
                                        "image",       "deploy",
                                        "--sysroot",   in->mount_dir,
                                        "--authfile",  AUTHFILE,
                                        "--imgref",    imgref,
                                        "--karg",      platform,
                                        "--karg",      "$ignition_firstboot",
                                        "--stateroot", "rhcos" };
                for (size_t i = 0; i < ELEMENTSOF(words); i++)
                        if (strv_extend(&deploy, words[i]) < 0)
                                goto oom;
                STRV_FOREACH (k, in->kargs)
                        if (strv_extend(&deploy, "--karg") < 0 || strv_extend(&deploy, *k) < 0)
                                goto oom;
                if (plan_add(&plan, &n, (const char *const *)deploy) < 0)
                        goto oom;
        }
        /* flush both filesystems for the boot loader, then unmount */
        ADD("fsfreeze", "--freeze", boot_dir);
        ADD("fsfreeze", "--unfreeze", boot_dir);
        ADD("umount", boot_dir);
        ADD("fsfreeze", "--freeze", in->mount_dir);
        ADD("fsfreeze", "--unfreeze", in->mount_dir);
        ADD("umount", in->mount_dir);
        *ret = plan;
        return (int)n;
oom:
        argvs_free(plan);
        return -ENOMEM;
}

int registry_copy_plan(const char *device, const char *mount_dir, const char *registry_dir, char ****ret)
{
        _cleanup_free_ char *root = partition_path(device, 4), *dest = NULL, *src = NULL;
        char ***plan = NULL;
        size_t n = 0;

        dest = strdup_printf("%s/ostree/deploy/rhcos/var/lib/iri-registry/", mount_dir);
        src = strdup_printf("%s/", registry_dir);
        if (!root || !dest || !src)
                goto oom;
        ADD("growpart", device, "4");
        ADD("mount", root, mount_dir);
        ADD("xfs_growfs", mount_dir);
        ADD("mkdir", "-p", dest);
        ADD("rsync", "-ah", "--info=progress2", src, dest);
        ADD("umount", mount_dir);
        *ret = plan;
        return (int)n;
oom:
        argvs_free(plan);
        return -ENOMEM;
}

int existing_root_plan(const ExistingRootPlanInput *in, char ****ret)
{
        _cleanup_strv_free_ char **kargs_append = NULL, **kargs_delete = NULL;
        char ***plan = NULL;
        size_t n = 0, na = strv_length(in->installer_args);
        bool copy_network = false;

        for (size_t i = 0; i < na; i++) {
                const char *a = in->installer_args[i];
                if ((streq(a, "--append-karg") || streq(a, "--delete-karg")) && i + 1 < na) {
                        if (strv_extend(streq(a, "--append-karg") ? &kargs_append : &kargs_delete,
                                        in->installer_args[i + 1]) < 0)
                                goto oom;
                        i++;
                } else if (streq(a, "--copy-network") || streq(a, "-n"))
                        copy_network = true;
        }

        ADD("mount", "-o", "remount,rw", "/sysroot");
        ADD("mount", "-o", "remount,rw", "/boot");
        if (in->has_node_image_ref)
                ADD("ostree", "refs", "--delete", "coreos/node-image");
        ADD("ostree", "admin", "stateroot-init", "install");
        ADD("ostree", "container", "image", "deploy", "--stateroot", "install", "--sysroot", "/",
            "--authfile", AUTHFILE, "--karg", "$ignition_firstboot", "--karg", "ignition.platform.id=metal",
            "--image", in->coreos_image);
        ADD("ostree", "admin", "finalize-staged");
        if (kargs_append || kargs_delete) {
                _cleanup_strv_free_ char **k = NULL;
                const char *const head[] = { "rpm-ostree", "kargs", "--os", "install" };
                for (size_t i = 0; i < ELEMENTSOF(head); i++)
                        if (strv_extend(&k, head[i]) < 0)
                                goto oom;
                STRV_FOREACH (a, kargs_append)
                        if (strv_extendf(&k, "--append=%s", *a) < 0)
                                goto oom;
                STRV_FOREACH (d, kargs_delete)
                        if (strv_extendf(&k, "--delete-if-present=%s", *d) < 0)
                                goto oom;
                if (plan_add(&plan, &n, (const char *const *)k) < 0)
                        goto oom;
                ADD("ostree", "admin", "finalize-staged");
        }
        if (copy_network) {
                ADD("mkdir", "-p", "/boot/coreos-firstboot-network");
                ADD("rsync", "-a", "/etc/NetworkManager/system-connections/",
                    "/boot/coreos-firstboot-network/");
        }
        ADD("mkdir", "-p", "/boot/ignition");
        ADD("cp", in->ignition, "/boot/ignition/config.ign");
        ADD("touch", "/boot/ignition.firstboot");
        *ret = plan;
        return (int)n;
oom:
        argvs_free(plan);
        return -ENOMEM;
}
