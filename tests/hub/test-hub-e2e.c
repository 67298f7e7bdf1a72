/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cradle-hub end to end: the program itself (build/hub/cradle-hub) against
 * a Kubernetes API server and an assisted-service.
 *
 * By default the test kube-apiserver (tests/kubeapi, the assisted-service,
 * hive and metal3 CRDs and CAPOA's OpenshiftAssistedControlPlane applied)
 * and the reference service
 * (tests/service/refservice.py) on 127.0.0.1. With CRADLE_TEST_KUBECONFIG a
 * real cluster (the CRDs installed), with CRADLE_TEST_SERVICE_URL (and
 * CRADLE_TEST_SERVICE_TOKEN when it wants one) a real assisted-service in
 * REST mode: the same cases run; those that need a test server's control
 * API skip and say why. Each case makes its own namespace and runs its own
 * cradle-hub watching only that namespace, so cases never see each other's
 * objects, on a shared cluster neither.
 *
 * The case dry_run_agents_register runs cradle agents and therefore only
 * inside the network namespace of tests/helpers/in-netns.sh (the meson
 * test hub-agents runs this program there).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "assisted/assisted.h"
#include "buf.h"
#include "capi-binding.h"
#include "cleanup.h"
#include "fileio.h"
#include "http.h"
#include "hub-claim.h"
#include "hub-inputs.h"
#include "hub-names.h"
#include "hub-plan.h"
#include "jsonutil.h"
#include "kube-test.h"
#include "kube/kube-config.h"
#include "kube/kube-csr.h"
#include "strutil.h"
#include "tests.h"
#include "uuid.h"

#define PULL_SECRET \
        "{\"auths\":{\"cloud.openshift.com\":{\"auth\":\"dXNlcjpwYXNzd29yZAo=\",\"email\":\"r@rr.com\"}}}"
#define AGENT_IMAGE "quay.io/edge-infrastructure/assisted-installer-agent:latest"

/* ---- the service ---- */

static struct {
        bool started, real;
        char *url;
        char *token;
        char *token_file;
        int pid;
} svc;

static const char *service_url(void)
{
        const char *real = getenv("CRADLE_TEST_SERVICE_URL");
        _cleanup_free_ char *script = NULL, *port_file = NULL, *scenario = NULL;
        unsigned port = 0;

        if (svc.started)
                return svc.url;
        svc.started = true;
        if (!isempty(real)) {
                svc.real = true;
                svc.url = strdup(real);
                if (!isempty(getenv("CRADLE_TEST_SERVICE_TOKEN"))) {
                        svc.token = strdup(getenv("CRADLE_TEST_SERVICE_TOKEN"));
                        svc.token_file = strdup_printf("%s/service-token", test_tmpdir());
                        ASSERT_OK(write_file_atomic(svc.token_file, svc.token, strlen(svc.token), 0600));
                }
                return svc.url;
        }
        script = test_src_path("tests/service/refservice.py");
        port_file = strdup_printf("%s/refservice-port", test_tmpdir());
        scenario = strdup_printf("%s/scenario.json", test_tmpdir());
        {
                static const char text[] =
                        "{\"settings\": {\"next_instruction_seconds\": 1, \"min_disk_size_gb\": 1,"
                        " \"min_cpu_cores\": 1, \"min_ram_mib\": 256}}";

                ASSERT_OK(write_file_atomic(scenario, text, strlen(text), 0600));
        }
        ASSERT_OK(test_server_start((char *[]){ (char *)"/usr/bin/python3", script, (char *)"--port",
                                                (char *)"0", (char *)"--port-file", port_file,
                                                (char *)"--scenario", scenario, (char *)"--quiet", NULL },
                                    port_file, &svc.pid, &port));
        svc.url = strdup_printf("http://127.0.0.1:%u", port);
        return svc.url;
}

static void need_refservice(const char *why)
{
        service_url();
        if (svc.real)
                test_skip("needs the reference service (%s); CRADLE_TEST_SERVICE_URL is set", why);
}

static AssistedClient *service_client_at(const char *url)
{
        _cleanup_free_ char *err = NULL;
        AssistedClient *c = NULL;

        ASSERT_OK(assisted_client_new(&(AssistedClientOptions){ .url = url,
                                                                .token = svc.token,
                                                                .bearer_token_file = svc.token_file,
                                                                .agent_version = AGENT_IMAGE },
                                      &c, &err));
        return c;
}

static AssistedClient *service_client(void)
{
        return service_client_at(service_url());
}

/* A user-API call to the service at url; returns the status, *ret the
 * answer (of a GET: 200; of a POST: 201, as the service's registrations
 * answer). */
static long service_call_at(const char *url, const char *method, const char *path, const char *body,
                            json_object **ret)
{
        _cleanup_(assisted_client_freep) AssistedClient *c = service_client_at(url);
        _cleanup_(json_object_putp) json_object *b = body ? kube_test_json(body) : NULL;
        _cleanup_free_ char *err = NULL;
        long status = 0;

        (void)assisted_call(c, method, path, b, streq(method, "POST") ? 201 : 200, &status, ret, &err);
        return status;
}

static long service_call(const char *method, const char *path, const char *body, json_object **ret)
{
        return service_call_at(service_url(), method, path, body, ret);
}

/* the control API of the refservice at url */
static long control_at(const char *url, const char *method, const char *path, const char *body,
                       json_object **ret)
{
        _cleanup_(http_client_freep) HttpClient *h = NULL;
        _cleanup_http_response_ HttpResponse r = {};
        _cleanup_free_ char *err = NULL, *p = strdup_printf("/__control%s", path);

        ASSERT_OK(http_client_new(&(HttpClientOptions){ .base_url = url }, &h, &err));
        ASSERT_OK(http_request(
                h,
                &(HttpRequest){
                        .method = method, .path = p, .body = body, .body_len = body ? strlen(body) : 0 },
                &r, &err));
        if (ret && r.body_len > 0)
                ASSERT_OK(json_parse(r.body, r.body_len, BUF_MAX_HTTP_BODY, ret, NULL));
        return r.status;
}

/* refservice's control API */
static long control(const char *method, const char *path, const char *body, json_object **ret)
{
        need_refservice("its control API");
        return control_at(svc.url, method, path, body, ret);
}

/* ---- cradle-hub ---- */

/* while set, hub_start points cradle-hub at this service instead */
static const char *hub_service_override;

typedef struct Hub {
        pid_t pid;
        unsigned health, metrics;
        char *log;
} Hub;

/* every hub still running when the program ends (a failed case) is stopped */
static pid_t running_hubs[32];

static void kill_hubs(void)
{
        for (size_t i = 0; i < ELEMENTSOF(running_hubs); i++)
                if (running_hubs[i] > 0) {
                        (void)kill(running_hubs[i], SIGKILL);
                        (void)waitpid(running_hubs[i], NULL, 0);
                        running_hubs[i] = 0;
                }
}

static void track_hub(pid_t pid, bool add)
{
        static bool registered;

        if (!registered) {
                atexit(kill_hubs);
                registered = true;
        }
        for (size_t i = 0; i < ELEMENTSOF(running_hubs); i++)
                if (add ? running_hubs[i] == 0 : running_hubs[i] == pid) {
                        running_hubs[i] = add ? pid : 0;
                        return;
                }
}

static unsigned free_port(void)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t l = sizeof(a);
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
        ASSERT_TRUE(getsockname(fd, (struct sockaddr *)&a, &l) == 0);
        return ntohs(a.sin_port);
}

static long http_get(unsigned port, const char *path, char **ret_body)
{
        _cleanup_(http_client_freep) HttpClient *h = NULL;
        _cleanup_http_response_ HttpResponse r = {};
        _cleanup_free_ char *base = strdup_printf("http://127.0.0.1:%u", port), *err = NULL;

        ASSERT_OK(http_client_new(
                &(HttpClientOptions){ .base_url = base, .total_timeout = 5 * USEC_PER_SEC }, &h, &err));
        if (http_request(h, &(HttpRequest){ .method = "GET", .path = path }, &r, &err) < 0)
                return 0;
        if (ret_body)
                *ret_body = TAKE_PTR(r.body);
        return r.status;
}

static char *hub_log(const Hub *h)
{
        char *text = NULL;

        (void)read_full_file(h->log, 64 * 1024 * 1024, &text, NULL);
        return text;
}

static void hub_start(Hub *h, const char *ns, char *const *extra)
{
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_free_ char *exe = strdup_printf("%s/hub/cradle-hub", test_builddir()), *hp = NULL,
                            *mp = NULL;
        char id[UUID_STRING_MAX];

        *h = (Hub){ .health = free_port(), .metrics = free_port() };
        uuid_random(id);
        h->log = strdup_printf("%s/hub-%s-%.8s.log", test_tmpdir(), ns, id);
        hp = strdup_printf("127.0.0.1:%u", h->health);
        mp = strdup_printf("127.0.0.1:%u", h->metrics);
        ASSERT_OK(strv_extend(&argv, exe));
        ASSERT_OK(strv_extend_pair(&argv, "--kubeconfig", kube_test_kubeconfig()));
        ASSERT_OK(strv_extend_pair(&argv, "--service-url", hub_service_override ?: service_url()));
        if (svc.token_file)
                ASSERT_OK(strv_extend_pair(&argv, "--service-token-file", svc.token_file));
        ASSERT_OK(strv_extend_pair(&argv, "--namespace", ns));
        ASSERT_OK(strv_extend_pair(&argv, "--health-probe-bind-address", hp));
        ASSERT_OK(strv_extend_pair(&argv, "--metrics-bind-address", mp));
        ASSERT_OK(strv_extend_pair(&argv, "--service-poll-interval", "1s"));
        ASSERT_OK(strv_extend_pair(&argv, "--service-resync-period", "5s"));
        ASSERT_OK(strv_extend_pair(&argv, "--image-cooldown", "2s"));
        ASSERT_OK(strv_extend_pair(&argv, "--log-level", "debug"));
        STRV_FOREACH (e, extra)
                ASSERT_OK(strv_extend(&argv, *e));
        h->pid = fork();
        ASSERT_TRUE(h->pid >= 0);
        if (h->pid == 0) {
                int fd = open(h->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

                if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
                        _exit(127);
                /* the hub ends with the test, whatever happens to it */
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                setenv("CRADLE_LOG_TARGET", "stderr", 1);
                execv(argv[0], argv);
                _exit(127);
        }
        track_hub(h->pid, true);
        for (int i = 0; i < 1200; i++) {
                int status;

                if (http_get(h->health, "/readyz", NULL) == 200)
                        return;
                if (waitpid(h->pid, &status, WNOHANG) == h->pid) {
                        _cleanup_free_ char *log = hub_log(h);

                        track_hub(h->pid, false);
                        h->pid = 0;
                        test_fail(__FILE__, __LINE__, "cradle-hub exited before it was ready:\n%s",
                                  strna(log));
                }
                usleep(100 * 1000);
        }
        test_fail(__FILE__, __LINE__, "cradle-hub not ready within 120 s");
}

/* SIGTERM; the exit status (0: a clean shutdown) */
static int hub_stop(Hub *h)
{
        int status = 0;

        if (h->pid <= 0)
                return -1;
        (void)kill(h->pid, SIGTERM);
        for (int i = 0; i < 600; i++) {
                if (waitpid(h->pid, &status, WNOHANG) == h->pid) {
                        track_hub(h->pid, false);
                        h->pid = 0;
                        free(h->log);
                        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                }
                usleep(100 * 1000);
        }
        (void)kill(h->pid, SIGKILL);
        (void)waitpid(h->pid, NULL, 0);
        h->pid = 0;
        test_fail(__FILE__, __LINE__, "cradle-hub did not stop within 60 s of SIGTERM");
}

static void hub_stop_ok(Hub *h)
{
        _cleanup_free_ char *log = hub_log(h);
        int rc = hub_stop(h);

        if (rc != 0)
                test_fail(__FILE__, __LINE__, "cradle-hub exit status %d:\n%s", rc, strna(log));
}

/* ---- objects ---- */

static void kcreate(KubeClient *c, HubKind k, const char *ns, const char *fmt, ...) _printf_(4, 5);
static void kcreate(KubeClient *c, HubKind k, const char *ns, const char *fmt, ...)
{
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        _cleanup_free_ char *text = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        text = strdup_vprintf(fmt, ap);
        va_end(ap);
        ASSERT_NOT_NULL(text);
        o = kube_test_json(text);
        r = kube_create(c, &hub_kind_info(k)->resource, ns, o, NULL, &st);
        if (r < 0)
                test_fail(__FILE__, __LINE__, "cannot create %s: %s\n%s", hub_kind_to_string(k),
                          strna(st.message), text);
}

static json_object *kget(KubeClient *c, HubKind k, const char *ns, const char *name)
{
        json_object *o = NULL;

        if (kube_get(c, &hub_kind_info(k)->resource, ns, name, &o, NULL) < 0)
                return NULL;
        return o;
}

static void kpatch(KubeClient *c, HubKind k, const char *ns, const char *name, bool status,
                   const char *patch)
{
        _cleanup_(json_object_putp) json_object *p = kube_test_json(patch);
        _cleanup_kube_status_ KubeStatus st = {};

        if (kube_patch(c, &hub_kind_info(k)->resource, ns, name, status ? "status" : NULL, KUBE_PATCH_MERGE,
                       p, NULL, &st) < 0)
                test_fail(__FILE__, __LINE__, "cannot patch %s %s/%s: %s", hub_kind_to_string(k), ns, name,
                          strna(st.message));
}

typedef bool (*Pred)(json_object *o, const void *arg);

/* Waits for pred on the object (NULL when absent); returns it. */
static json_object *wait_for(KubeClient *c, HubKind k, const char *ns, const char *name, Pred pred,
                             const void *arg, unsigned seconds, const Hub *h)
{
        json_object *o = NULL;

        for (unsigned i = 0; i < seconds * 10; i++) {
                json_object_put(o);
                o = kget(c, k, ns, name);
                if (pred(o, arg))
                        return o;
                usleep(100 * 1000);
        }
        {
                _cleanup_free_ char *log = h ? hub_log(h) : NULL;
                size_t n = log ? strlen(log) : 0;

                test_fail(__FILE__, __LINE__, "timed out waiting on %s %s/%s:\n%s\n--- hub log (tail):\n%s",
                          hub_kind_to_string(k), ns, name,
                          o ? json_to_string(o, JSON_FORMAT_PRETTY) : "(absent)",
                          log ? log + (n > 6000 ? n - 6000 : 0) : "");
        }
}

typedef struct Cond {
        const char *type, *status, *reason, *message;
} Cond;

static bool has_condition(json_object *o, const void *arg)
{
        const Cond *c = arg;
        json_object *l = json_get_path(o, "status.conditions");

        for (size_t i = 0; json_object_is_type(l, json_type_array) && i < hub_json_array_length(l); i++) {
                json_object *e = json_object_array_get_idx(l, i);

                if (streq_ptr(json_get_string(e, "type"), c->type) &&
                    streq_ptr(json_get_string(e, "status"), c->status) &&
                    streq_ptr(json_get_string(e, "reason"), c->reason) &&
                    (!c->message || (c->message[strlen(c->message) - 1] == '*'
                                             ? strneq(strempty(json_get_string(e, "message")), c->message,
                                                      strlen(c->message) - 1)
                                             : streq_ptr(json_get_string(e, "message"), c->message))))
                        return true;
        }
        return false;
}

static bool has_path(json_object *o, const void *arg)
{
        json_object *v = json_get_path(o, arg);

        return v && !(json_object_is_type(v, json_type_string) && json_object_get_string_len(v) == 0);
}

static bool absent(json_object *o, const void *arg)
{
        (void)arg;
        return !o;
}

static const char *str_at(json_object *o, const char *path)
{
        json_object *v = json_get_path(o, path);

        return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void create_pull_secret(KubeClient *c, const char *ns, bool labelled)
{
        _cleanup_(json_object_putp) json_object *ps = json_new_string(PULL_SECRET);

        kcreate(c, HUB_KIND_SECRET, ns,
                "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"type\":\"kubernetes.io/dockerconfigjson\","
                "\"metadata\":{\"name\":\"pull-secret\"%s},\"stringData\":{\".dockerconfigjson\":%s}}",
                labelled ? ",\"labels\":{\"agent-install.openshift.io/watch\":\"true\"}" : "",
                json_object_to_json_string(ps));
}

/* The InfraEnv of the docs (crds/infraEnvLateBinding.yaml) with a name of the test's. */
static void create_infraenv(KubeClient *c, const char *ns, const char *name, const char *extra_spec)
{
        kcreate(c, HUB_KIND_INFRAENV, ns,
                "{\"apiVersion\":\"agent-install.openshift.io/v1beta1\",\"kind\":\"InfraEnv\","
                "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"pullSecretRef\":{\"name\":\"pull-secret\"},"
                "\"sshAuthorizedKey\":\"ssh-ed25519 "
                "AAAAC3NzaC1lZDI1NTE5AAAAIGq1Yg6s2pT6fYzKx9k4JQm3m8c0zQ0v8V0f3bq9n8jF t@e\""
                "%s}}",
                name, extra_spec ? extra_spec : "");
}

static const Cond image_created = { "ImageCreated", "True", "InfraEnvAvailable",
                                    "InfraEnv is available: Image has been created" };

static char *ready_infraenv(KubeClient *c, const char *ns, const char *name, const Hub *h)
{
        _cleanup_(json_object_putp) json_object *ie =
                wait_for(c, HUB_KIND_INFRAENV, ns, name, has_condition, &image_created, 120, h);

        return strdup(hub_object_annotation(ie, HUB_ANNOTATION_INFRAENV_ID));
}

/* ---- hosts, as an agent registers them ---- */

static void register_host(const char *infra_env_id, const char *host_id, const char *mac, const char *ip,
                          const char *hostname)
{
        _cleanup_(assisted_client_freep) AssistedClient *c = service_client();
        _cleanup_(json_object_putp) json_object *steps = NULL, *reply = NULL, *host = NULL;
        _cleanup_free_ char *err = NULL, *inventory = NULL, *step_id = NULL;
        long status = 0;
        json_object *list;

        if (assisted_register_host(c, infra_env_id, host_id, AGENT_IMAGE, &status, &host, &err) < 0)
                test_fail(__FILE__, __LINE__, "cannot register host %s: %s", host_id, strna(err));
        ASSERT_OK(assisted_get_next_steps(c, infra_env_id, host_id, &status, &steps, &err));
        list = json_get(steps, "instructions");
        for (size_t i = 0; json_object_is_type(list, json_type_array) && i < hub_json_array_length(list);
             i++)
                if (streq_ptr(json_get_string(json_object_array_get_idx(list, i), "step_type"), "inventory"))
                        step_id = strdup(json_get_string(json_object_array_get_idx(list, i), "step_id"));
        ASSERT_NOT_NULL(step_id);
        inventory = strdup_printf(
                "{\"hostname\":\"%s\",\"bmc_address\":\"0.0.0.0\",\"bmc_v6address\":\"::/0\","
                "\"boot\":{\"current_boot_mode\":\"bios\"},\"cpu\":{\"architecture\":\"x86_64\",\"count\":4,"
                "\"flags\":[\"fpu\",\"vmx\"],\"frequency\":2100,\"model_name\":\"Xeon\"},"
                "\"memory\":{\"physical_bytes\":17179869184,\"usable_bytes\":16779869184},"
                "\"disks\":[{\"id\":\"/dev/disk/by-path/pci-0000:00:05.0\",\"by_path\":\"/dev/disk/by-path/"
                "pci-0000:00:05.0\","
                "\"drive_type\":\"SSD\",\"name\":\"vda\",\"path\":\"/dev/vda\",\"size_bytes\":128849018880,"
                "\"bootable\":true,\"serial\":\"s-%s\"}],"
                "\"interfaces\":[{\"name\":\"eth0\",\"mac_address\":\"%s\",\"type\":\"physical\",\"has_"
                "carrier\":true,"
                "\"flags\":[\"up\",\"broadcast\",\"multicast\",\"running\"],\"mtu\":1500,\"speed_mbps\":"
                "10000,"
                "\"ipv4_addresses\":[\"%s/24\"],\"ipv6_addresses\":[]}],"
                "\"routes\":[{\"destination\":\"0.0.0.0\",\"family\":2,\"gateway\":\"198.51.100.1\","
                "\"interface\":\"eth0\"}],"
                "\"system_vendor\":{\"manufacturer\":\"Red "
                "Hat\",\"product_name\":\"KVM\",\"virtual\":true}}",
                hostname, host_id, mac, ip);
        reply = json_new_object();
        ASSERT_OK(json_add_string(reply, "step_type", "inventory"));
        ASSERT_OK(json_add_string(reply, "step_id", step_id));
        ASSERT_OK(json_add_int64(reply, "exit_code", 0));
        ASSERT_OK(json_add_string(reply, "output", inventory));
        if (assisted_post_step_reply(c, infra_env_id, host_id, reply, &status, &err) < 0)
                test_fail(__FILE__, __LINE__, "inventory reply of %s: %s", host_id, strna(err));
}

/* ---- the cases ---- */

static void setup(void)
{
        static bool done;

        if (done)
                return;
        done = true;
        kube_test_add_apply("tests/reference/assisted-service/hack/crds/hive");
        kube_test_add_apply("tests/reference/assisted-service/hack/crds/metal3");
        kube_test_add_apply("tests/reference/capoa/controlplane/config/crd/bases");
        /* the Cluster API provider (--capi): CAPI core, CAPOA's bootstrap
         * config, Metal3's infrastructure machines */
        kube_test_add_apply("tests/reference/cluster-api/core/config/crd/bases");
        kube_test_add_apply("tests/reference/capoa/bootstrap/config/crd/bases");
        kube_test_add_apply("tests/reference/metal3-capi/config/crd/bases");
}

TEST(infraenv_image_created)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-ie");
        _cleanup_(json_object_putp) json_object *ie = NULL, *secret = NULL, *service = NULL;
        _cleanup_free_ char *id = NULL, *path = NULL, *metrics = NULL;
        Hub h;

        create_pull_secret(c, ns, false);
        create_infraenv(c, ns, "myinfraenv", NULL);
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "myinfraenv", &h);
        ASSERT_TRUE(uuid_is_valid(id));
        ie = kget(c, HUB_KIND_INFRAENV, ns, "myinfraenv");
        ASSERT_TRUE(hub_object_has_finalizer(ie, HUB_FINALIZER_INFRAENV));
        ASSERT_NULL(hub_object_annotation(ie, HUB_ANNOTATION_REGISTERING));
        ASSERT_NOT_NULL(str_at(ie, "status.isoDownloadURL"));
        ASSERT_NOT_NULL(str_at(ie, "status.createdTime"));
        ASSERT_STREQ(json_get_string(json_get_path(ie, "status.agentLabelSelector.matchLabels"),
                                     HUB_LABEL_INFRAENV),
                     "myinfraenv");
        ASSERT_NOT_NULL(str_at(ie, "status.debugInfo.eventsURL"));
        /* the pull secret got the watch and backup labels */
        secret = kget(c, HUB_KIND_SECRET, ns, "pull-secret");
        ASSERT_STREQ(hub_object_label(secret, HUB_LABEL_WATCH), "true");
        ASSERT_STREQ(hub_object_label(secret, HUB_LABEL_BACKUP), "true");
        /* the service has it, with the URL the hub published */
        path = strdup_printf("/v2/infra-envs/%s", id);
        ASSERT_EQ(service_call("GET", path, NULL, &service), 200);
        ASSERT_STREQ(json_get_string(service, "name"), "myinfraenv");
        ASSERT_STREQ(json_get_string(service, "download_url"), str_at(ie, "status.isoDownloadURL"));
        ASSERT_STREQ(json_get_string(service, "type"), "minimal-iso");
        /* probes and metrics */
        ASSERT_EQ(http_get(h.health, "/healthz", NULL), 200);
        ASSERT_EQ(http_get(h.metrics, "/metrics", &metrics), 200);
        ASSERT_CONTAINS(metrics,
                        "controller_runtime_reconcile_total{controller=\"infraenv\",result=\"success\"}");
        ASSERT_CONTAINS(metrics, "cradle_hub_service_request_duration_seconds_count{operation="
                                 "\"RegisterInfraEnv\",code=\"201\"} 1");
        ASSERT_CONTAINS(metrics, "workqueue_depth{name=\"infraenv\"}");
        hub_stop_ok(&h);
}

TEST(restart_registers_nothing_twice)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-restart");
        _cleanup_(json_object_putp) json_object *list = NULL, *before = NULL, *after = NULL;
        _cleanup_free_ char *id = NULL;
        unsigned same = 0;
        Hub h;

        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "restarted", NULL);
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "restarted", &h);
        hub_stop_ok(&h);
        before = kget(c, HUB_KIND_INFRAENV, ns, "restarted");
        hub_start(&h, ns, NULL);
        /* a few polls and reconciles later */
        sleep(3);
        hub_stop_ok(&h);
        after = kget(c, HUB_KIND_INFRAENV, ns, "restarted");
        /* nothing rewritten, nothing registered again */
        ASSERT_STREQ(kube_object_resource_version(before), kube_object_resource_version(after));
        ASSERT_EQ(service_call("GET", "/v2/infra-envs", NULL, &list), 200);
        for (size_t i = 0; i < hub_json_array_length(list); i++)
                if (streq_ptr(json_get_string(json_object_array_get_idx(list, i), "id"), id))
                        same++;
        ASSERT_EQ(same, 1);
}

/* how many infra-envs of the service have that name */
static unsigned service_infraenvs_named(const char *name)
{
        _cleanup_(json_object_putp) json_object *list = NULL;
        unsigned named = 0;

        ASSERT_EQ(service_call("GET", "/v2/infra-envs", NULL, &list), 200);
        for (size_t i = 0; i < hub_json_array_length(list); i++)
                if (streq_ptr(json_get_string(json_object_array_get_idx(list, i), "name"), name))
                        named++;
        return named;
}

/* A hub that crashed between the service's answer to its register call and
 * the write of the id: the InfraEnv has the "registering" marker (of a
 * replica that is gone, older than the hold time) and no id, the service
 * has the infra-env. The next hub finds it and links it: one infra-env. */
TEST(crash_after_register_adopts_instead_of_registering_again)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-crash");
        _cleanup_(json_object_putp) json_object *made = NULL;
        _cleanup_free_ char *marker = hub_claim_marker(now_usec(CLOCK_REALTIME) - 180 * USEC_PER_SEC,
                                                       "cradle-hub-gone_1"),
                            *name = NULL, *id = NULL, *body = NULL, *patch = NULL;
        _cleanup_(json_object_putp) json_object *ps = json_object_new_string(PULL_SECRET);
        Hub h;

        ASSERT_NOT_NULL(marker);
        create_pull_secret(c, ns, true);
        /* a name of its own: the service's list is shared with other cases */
        name = strdup_printf("crashed-%.8s", ns + strlen(ns) - 8);
        create_infraenv(c, ns, name, NULL);
        patch = strdup_printf("{\"metadata\":{\"annotations\":{\"%s\":\"%s\"}}}", HUB_ANNOTATION_REGISTERING,
                              marker);
        kpatch(c, HUB_KIND_INFRAENV, ns, name, false, patch);
        body = strdup_printf("{\"name\":\"%s\",\"image_type\":\"minimal-iso\",\"pull_secret\":%s}", name,
                             json_object_to_json_string_ext(ps, JSON_C_TO_STRING_PLAIN));
        ASSERT_EQ(service_call("POST", "/v2/infra-envs", body, &made), 201);

        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, name, &h);
        ASSERT_STREQ(id, json_get_string(made, "id"));
        hub_stop_ok(&h);
        ASSERT_EQ(service_infraenvs_named(name), 1u);
}

TEST(infraenv_input_errors)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-inputs");
        static const Cond missing = { "ImageCreated", "False", "ImageCreationError",
                                      "Failed to create image: failed to find secret pull-secret: secrets "
                                      "\"pull-secret\" not found" };
        static const Cond no_cd = {
                "ImageCreated", "Unknown", "MissingClusterDeployment",
                "ClusterDeployment is missing: failed to get clusterDeployment with name nope in "
                "namespace *"
        };
        Hub h;

        create_infraenv(c, ns, "nosecret", NULL);
        create_infraenv(c, ns, "nocd", ",\"clusterRef\":{\"name\":\"nope\",\"namespace\":\"default\"}");
        hub_start(&h, ns, NULL);
        json_object_put(wait_for(c, HUB_KIND_INFRAENV, ns, "nosecret", has_condition, &missing, 60, &h));
        json_object_put(wait_for(c, HUB_KIND_INFRAENV, ns, "nocd", has_condition, &no_cd, 60, &h));
        /* the secret arrives, labelled: the InfraEnv recovers by itself */
        create_pull_secret(c, ns, true);
        free(ready_infraenv(c, ns, "nosecret", &h));
        hub_stop_ok(&h);
}

/* cradle-hub's count of a service operation answered code, from its metrics */
static unsigned service_calls(const Hub *h, const char *operation, int code)
{
        _cleanup_free_ char *metrics = NULL,
                            *key = strdup_printf(
                                    "cradle_hub_service_request_duration_seconds_count{operation="
                                    "\"%s\",code=\"%d\"} ",
                                    operation, code);
        const char *at;

        ASSERT_NOT_NULL(key);
        ASSERT_EQ(http_get(h->metrics, "/metrics", &metrics), 200);
        at = strstr(metrics, key);
        return at ? (unsigned)strtoul(at + strlen(key), NULL, 10) : 0;
}

/* A registration the service refuses (a malformed SSH key, 400) is shown
 * and not sent again at once: each attempt writes the InfraEnv, and those
 * writes must not start the next attempt (they did, ten times a second).
 * A spec change is tried at once. */
TEST(refused_registration_not_sent_again_at_once)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-refused");
        static const Cond refused = { "ImageCreated", "False", "ImageCreationError",
                                      "Failed to create image: *" };
        unsigned before, after;
        Hub h;

        create_pull_secret(c, ns, true);
        kcreate(c, HUB_KIND_INFRAENV, ns,
                "{\"apiVersion\":\"agent-install.openshift.io/v1beta1\",\"kind\":\"InfraEnv\","
                "\"metadata\":{\"name\":\"refused\"},\"spec\":{\"pullSecretRef\":{\"name\":\"pull-secret\"},"
                "\"sshAuthorizedKey\":\"ssh-ed25519 bm90IGEga2V5 t@e\"}}");
        hub_start(&h, ns, NULL);
        json_object_put(wait_for(c, HUB_KIND_INFRAENV, ns, "refused", has_condition, &refused, 60, &h));
        before = service_calls(&h, "RegisterInfraEnv", 400);
        ASSERT_TRUE(before >= 1);
        sleep(5);
        after = service_calls(&h, "RegisterInfraEnv", 400);
        /* at most the one its own write had started already */
        ASSERT_TRUE(after <= before + 1);
        /* the key mended: registered at once */
        kpatch(c, HUB_KIND_INFRAENV, ns, "refused", false,
               "{\"spec\":{\"sshAuthorizedKey\":\"ssh-ed25519 "
               "AAAAC3NzaC1lZDI1NTE5AAAAIGq1Yg6s2pT6fYzKx9k4JQm3m8c0zQ0v8V0f3bq9n8jF t@e\"}}");
        free(ready_infraenv(c, ns, "refused", &h));
        hub_stop_ok(&h);
}

static bool static_config_count(json_object *service, const void *arg)
{
        const char *s = json_get_string(service, "static_network_config");
        _cleanup_(json_object_putp) json_object *l = NULL;

        if (isempty(s))
                return *(const size_t *)arg == 0;
        if (json_parse(s, strlen(s), BUF_MAX_HTTP_BODY, &l, NULL) < 0)
                return false;
        return hub_json_array_length(l) == *(const size_t *)arg;
}

static json_object *wait_service_infraenv(const char *id, Pred pred, const void *arg)
{
        _cleanup_free_ char *path = strdup_printf("/v2/infra-envs/%s", id);
        json_object *s = NULL;

        for (int i = 0; i < 600; i++) {
                json_object_put(s);
                s = NULL;
                if (service_call("GET", path, NULL, &s) == 200 && pred(s, arg))
                        return s;
                usleep(100 * 1000);
        }
        test_fail(__FILE__, __LINE__, "the service's infra-env %s: %s", id,
                  s ? json_to_string(s, 0) : "(none)");
}

static void create_nmstate(KubeClient *c, const char *ns, const char *name, const char *mac, const char *ip)
{
        /* the docs' sample (crds/nmstate.yaml), one interface */
        kcreate(c, HUB_KIND_NMSTATECONFIG, ns,
                "{\"apiVersion\":\"agent-install.openshift.io/v1beta1\",\"kind\":\"NMStateConfig\","
                "\"metadata\":{\"name\":\"%s\",\"labels\":{\"some-user-defined-label-name\":\"some-user-"
                "defined-label-value\"}},"
                "\"spec\":{\"config\":{\"interfaces\":[{\"name\":\"eth0\",\"type\":\"ethernet\",\"state\":"
                "\"up\","
                "\"mac-address\":\"%s\",\"ipv4\":{\"enabled\":true,\"address\":[{\"ip\":\"%s\",\"prefix-"
                "length\":24}],"
                "\"dhcp\":false}}],\"dns-resolver\":{\"config\":{\"server\":[\"198.51.100.1\"]}},"
                "\"routes\":{\"config\":[{\"destination\":\"0.0.0.0/"
                "0\",\"next-hop-address\":\"198.51.100.1\","
                "\"next-hop-interface\":\"eth0\",\"table-id\":254}]}},"
                "\"interfaces\":[{\"name\":\"eth0\",\"macAddress\":\"%s\"}]}}",
                name, mac, ip, mac);
}

TEST(nmstate_configs_become_the_static_network_config)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-nmstate");
        _cleanup_(json_object_putp) json_object *s1 = NULL, *s2 = NULL, *s3 = NULL;
        _cleanup_free_ char *id = NULL;
        const size_t two = 2, none = 0;
        static const Cond bad = { "ImageCreated", "False", "ImageCreationError",
                                  "Failed to create image: *" };
        Hub h;

        create_pull_secret(c, ns, true);
        create_nmstate(c, ns, "host-a", "02:00:00:80:12:14", "198.51.100.30");
        create_nmstate(c, ns, "host-b", "02:00:00:80:12:15", "198.51.100.31");
        create_infraenv(c, ns, "static",
                        ",\"nmStateConfigLabelSelector\":{\"matchLabels\":{\"some-user-defined-label-name\":"
                        "\"some-user-defined-label-value\"}}");
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "static", &h);
        s1 = wait_service_infraenv(id, static_config_count, &two);
        ASSERT_CONTAINS(json_get_string(s1, "static_network_config"), "198.51.100.30");
        /* a changed NMStateConfig changes what the service has */
        kpatch(c, HUB_KIND_NMSTATECONFIG, ns, "host-b", false,
               "{\"spec\":{\"config\":{\"interfaces\":[{\"name\":\"eth0\",\"type\":\"ethernet\",\"state\":"
               "\"up\","
               "\"mac-address\":\"02:00:00:80:12:15\",\"ipv4\":{\"enabled\":true,\"address\":[{\"ip\":\"198."
               "51.100.41\","
               "\"prefix-length\":24}],\"dhcp\":false}}]}}}");
        for (int i = 0; i < 600; i++) {
                json_object_put(s2);
                s2 = wait_service_infraenv(id, static_config_count, &two);
                if (strstr(strempty(json_get_string(s2, "static_network_config")), "198.51.100.41"))
                        break;
                usleep(100 * 1000);
        }
        ASSERT_CONTAINS(json_get_string(s2, "static_network_config"), "198.51.100.41");
        /* one the service's validation refuses (the CRD's schema keeps
         * spec.interfaces well-formed; nmstate's own checks are the
         * service's): its message in the condition, no requeue loop */
        kcreate(c, HUB_KIND_NMSTATECONFIG, ns,
                "{\"apiVersion\":\"agent-install.openshift.io/"
                "v1beta1\",\"kind\":\"NMStateConfig\",\"metadata\":{"
                "\"name\":\"broken\",\"labels\":{\"some-user-defined-label-name\":\"some-user-defined-label-"
                "value\"}},"
                "\"spec\":{\"config\":{\"interfaces\":[{\"name\":\"eth0\",\"type\":\"wifi\",\"state\":"
                "\"up\"}]},"
                "\"interfaces\":[{\"name\":\"eth0\",\"macAddress\":\"02:00:00:80:12:16\"}]}}");
        {
                _cleanup_(json_object_putp) json_object *ie =
                        wait_for(c, HUB_KIND_INFRAENV, ns, "static", has_condition, &bad, 60, &h);

                ASSERT_CONTAINS(
                        json_get_string(json_object_array_get_idx(json_get_path(ie, "status.conditions"), 0),
                                        "message"),
                        "unknown variant `wifi`");
        }
        /* every config gone: the service's is cleared */
        {
                static const char *const names[] = { "broken", "host-a", "host-b" };

                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        ASSERT_OK(kube_delete(c, &hub_kind_info(HUB_KIND_NMSTATECONFIG)->resource, ns,
                                              names[i], NULL, NULL, NULL));
        }
        s3 = wait_service_infraenv(id, static_config_count, &none);
        free(ready_infraenv(c, ns, "static", &h));
        hub_stop_ok(&h);
}

/* a counter of the hub's /metrics: the value of the line that starts with
 * series (name{labels}), 0 when absent */
static double metric(const Hub *h, const char *series)
{
        _cleanup_free_ char *text = NULL;
        const char *p;

        ASSERT_EQ(http_get(h->metrics, "/metrics", &text), 200);
        for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (startswith(p, series) && p[strlen(series)] == ' ')
                        return strtod(p + strlen(series) + 1, NULL);
        return 0;
}

/* The documentation's scale: 3,960 NMStateConfigs selected by one InfraEnv
 * (docs/hive-integration: "up to 3960 NMStateConfigs per InfraEnv"), a
 * second InfraEnv of the same namespace selecting two others. Each gets
 * exactly its configs; the hub reads them through its index (one list of
 * the kind, the informer's, never one per reconcile); a reconcile with
 * nothing new calls the service with no update. */
TEST(thousands_of_nmstate_configs_on_one_infraenv)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client()), *fast = NULL;
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        const char *ns = kube_test_namespace("hub-nm3960");
        _cleanup_(json_object_putp) json_object *big = NULL, *small = NULL;
        _cleanup_free_ char *id = NULL, *id_b = NULL;
        const size_t n = 3960, two = 2;
        double updates, reconciles;
        Hub h;

        /* the test's own client makes the configs without client-go's 5 QPS */
        ASSERT_OK(kube_config_load(kube_test_kubeconfig(), NULL, &cfg, NULL));
        ASSERT_OK(kube_client_new(cfg, &(KubeClientOptions){ .qps = -1 }, &fast, NULL));
        create_pull_secret(c, ns, true);
        for (size_t i = 0; i < n; i++) {
                char name[32], mac[32], ip[32];

                snprintf(name, sizeof(name), "host-%04zu", i);
                snprintf(mac, sizeof(mac), "02:00:00:%02zx:%02zx:%02zx", (i >> 16) & 0xff, (i >> 8) & 0xff,
                         i & 0xff);
                snprintf(ip, sizeof(ip), "10.%zu.%zu.%zu", i / 60000, (i / 250) % 240, i % 250 + 1);
                create_nmstate(fast, ns, name, mac, ip);
        }
        kcreate(c, HUB_KIND_NMSTATECONFIG, ns,
                "{\"apiVersion\":\"agent-install.openshift.io/v1beta1\",\"kind\":\"NMStateConfig\","
                "\"metadata\":{\"name\":\"rack-b-0\",\"labels\":{\"rack\":\"b\"}},"
                "\"spec\":{\"config\":{\"interfaces\":[{\"name\":\"eth0\",\"type\":\"ethernet\","
                "\"state\":\"up\",\"mac-address\":\"02:00:00:b0:00:01\"}]},"
                "\"interfaces\":[{\"name\":\"eth0\",\"macAddress\":\"02:00:00:b0:00:01\"}]}}");
        kcreate(c, HUB_KIND_NMSTATECONFIG, ns,
                "{\"apiVersion\":\"agent-install.openshift.io/v1beta1\",\"kind\":\"NMStateConfig\","
                "\"metadata\":{\"name\":\"rack-b-1\",\"labels\":{\"rack\":\"b\"}},"
                "\"spec\":{\"config\":{\"interfaces\":[{\"name\":\"eth0\",\"type\":\"ethernet\","
                "\"state\":\"up\",\"mac-address\":\"02:00:00:b0:00:02\"}]},"
                "\"interfaces\":[{\"name\":\"eth0\",\"macAddress\":\"02:00:00:b0:00:02\"}]}}");
        create_infraenv(c, ns, "myinfraenv",
                        ",\"nmStateConfigLabelSelector\":{\"matchLabels\":{\"some-user-defined-label-name\":"
                        "\"some-user-defined-label-value\"}}");
        create_infraenv(c, ns, "rack-b",
                        ",\"nmStateConfigLabelSelector\":{\"matchLabels\":{\"rack\":\"b\"}}");
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "myinfraenv", &h);
        id_b = ready_infraenv(c, ns, "rack-b", &h);
        big = wait_service_infraenv(id, static_config_count, &n);
        small = wait_service_infraenv(id_b, static_config_count, &two);
        ASSERT_NOT_CONTAINS(json_get_string(big, "static_network_config"), "02:00:00:b0:00:01");

        /* nothing new: a reconcile (a label touched) sends no update */
        updates = metric(&h, "cradle_hub_service_request_duration_seconds_count{operation="
                             "\"UpdateInfraEnv\",code=\"201\"}");
        reconciles =
                metric(&h, "controller_runtime_reconcile_total{controller=\"infraenv\",result=\"success\"}");
        kpatch(c, HUB_KIND_INFRAENV, ns, "myinfraenv", false,
               "{\"metadata\":{\"labels\":{\"touched\":\"1\"}}}");
        for (int i = 0; i < 300 && metric(&h, "controller_runtime_reconcile_total{controller=\"infraenv\","
                                              "result=\"success\"}") <= reconciles;
             i++)
                usleep(100 * 1000);
        ASSERT_TRUE(
                metric(&h,
                       "controller_runtime_reconcile_total{controller=\"infraenv\",result=\"success\"}") >
                reconciles);
        ASSERT_TRUE(metric(&h, "cradle_hub_service_request_duration_seconds_count{operation="
                               "\"UpdateInfraEnv\",code=\"201\"}") == updates);
        hub_stop_ok(&h);

        /* the kind was listed once (the informer), whatever the reconciles */
        if (!kube_test_real()) {
                _cleanup_(json_object_putp) json_object *log = NULL;
                json_object *items;
                unsigned lists = 0;

                ASSERT_EQ(kube_test_ctl("GET", "/requests", NULL, &log), 200);
                items = json_get(log, "requests");
                for (size_t i = 0; i < hub_json_array_length(items); i++) {
                        json_object *e = json_object_array_get_idx(items, i);

                        if (startswith(strempty(json_get_string(e, "userAgent")), "cradle-hub/") &&
                            streq_ptr(json_get_string(e, "verb"), "list") &&
                            streq_ptr(json_get_string(e, "resource"), "nmstateconfigs") &&
                            streq_ptr(json_get_string(e, "namespace"), ns) &&
                            !json_get(json_get(e, "query"), "continue"))
                                lists++;
                }
                ASSERT_EQ(lists, 1u); /* its pages not counted */
        }
}

/* Two replicas with --leader-elect on one Lease: the standby's cache is warm
 * and its probes answer, but it writes nothing; when the leader stops
 * (SIGTERM releases the Lease) the standby takes over and reconciles. */
TEST(leader_election_hands_over)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-leader");
        _cleanup_free_ char *id = NULL, *lease_ns = strdup(ns);
        _cleanup_(json_object_putp) json_object *lease = NULL;
        static const char series[] =
                "leader_election_master_status{name=\"cradle-hub.agent-install.openshift.io\"}";
        char *const extra[] = { (char *)"--leader-elect", (char *)"--leader-election-namespace", lease_ns,
                                NULL };
        Hub a, b;

        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "first", NULL);
        hub_start(&a, ns, extra);
        id = ready_infraenv(c, ns, "first", &a);
        ASSERT_TRUE(metric(&a, series) == 1);
        hub_start(&b, ns, extra);
        ASSERT_EQ(http_get(b.health, "/readyz", NULL), 200);
        ASSERT_TRUE(metric(&b, series) == 0);
        ASSERT_OK(kube_get(c, &KUBE_RESOURCE("coordination.k8s.io", "v1", "leases", "Lease", true), ns,
                           "cradle-hub.agent-install.openshift.io", &lease, NULL));
        ASSERT_NOT_NULL(str_at(lease, "spec.holderIdentity"));

        /* a new InfraEnv: the leader registers it, the standby reconciles
         * nothing */
        create_infraenv(c, ns, "second", NULL);
        free(ready_infraenv(c, ns, "second", &a));
        ASSERT_TRUE(
                metric(&b,
                       "controller_runtime_reconcile_total{controller=\"infraenv\",result=\"success\"}") ==
                0);
        /* the leader goes (releasing the Lease): the standby takes over */
        hub_stop_ok(&a);
        create_infraenv(c, ns, "third", NULL);
        free(ready_infraenv(c, ns, "third", &b));
        ASSERT_TRUE(metric(&b, series) == 1);
        ASSERT_TRUE(
                metric(&b,
                       "controller_runtime_reconcile_total{controller=\"infraenv\",result=\"success\"}") >
                0);
        hub_stop_ok(&b);
}

static bool agent_with_inventory(json_object *o, const void *arg)
{
        (void)arg;
        return o && hub_json_array_length(json_get_path(o, "status.inventory.interfaces")) > 0;
}

/* A dry-run agent reports only lo (type "device"), which the service drops
 * as a virtual interface (enable_virtual_interfaces is false), as the real
 * one does: its inventory has a hostname but no interfaces. */
static bool agent_with_hostname(json_object *o, const void *arg)
{
        (void)arg;
        return o && !isempty(str_at(o, "status.inventory.hostname"));
}

TEST(agents_created_for_registered_hosts)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-agents");
        _cleanup_free_ char *id = NULL;
        char h1[UUID_STRING_MAX], h2[UUID_STRING_MAX];
        _cleanup_(json_object_putp) json_object *a1 = NULL, *a2 = NULL;
        Hub h;

        uuid_random(h1);
        uuid_random(h2);
        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "hosts", ",\"agentLabels\":{\"team\":\"blue\"}");
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "hosts", &h);
        /* the poller has listed the infra-env's hosts once (none): from now
         * on it follows the infra-env's events */
        for (int i = 0; i < 300 && metric(&h, "cradle_hub_service_request_duration_seconds_count{operation="
                                              "\"v2ListHosts\",code=\"200\"}") < 1;
             i++)
                usleep(100 * 1000);
        register_host(id, h1, "02:00:00:00:01:01", "198.51.100.61", "host-1");
        register_host(id, h2, "02:00:00:00:01:02", "198.51.100.62", "host-2");
        a1 = wait_for(c, HUB_KIND_AGENT, ns, h1, agent_with_inventory, NULL, 120, &h);
        a2 = wait_for(c, HUB_KIND_AGENT, ns, h2, agent_with_inventory, NULL, 120, &h);
        ASSERT_STREQ(hub_object_label(a1, HUB_LABEL_INFRAENV), "hosts");
        ASSERT_STREQ(hub_object_label(a1, "team"), "blue");
        ASSERT_STREQ(hub_object_label(a1, HUB_LABEL_CPU_VIRTENABLED), "true");
        ASSERT_STREQ(hub_object_label(a1, HUB_LABEL_STORAGE_NONROTATIONAL), "true");
        ASSERT_STREQ(hub_object_label(a1, HUB_LABEL_HOST_MANUFACTURER), "RedHat");
        ASSERT_STREQ(
                str_at(json_object_array_get_idx(json_get_path(a1, "metadata.ownerReferences"), 0), "kind"),
                "InfraEnv");
        {
                bool approved = true;

                ASSERT_OK(json_get_bool(json_get(a1, "spec"), "approved", &approved));
                ASSERT_FALSE(approved);
        }
        ASSERT_STREQ(str_at(json_object_array_get_idx(json_get_path(a2, "status.inventory.interfaces"), 0),
                            "macAddress"),
                     "02:00:00:00:01:02");
        ASSERT_STREQ(str_at(a2, "status.inventory.hostname"), "host-2");
        /* the hosts were found through the infra-env's event feed */
        ASSERT_TRUE(metric(&h,
                           "cradle_hub_service_request_duration_seconds_count{operation=\"v2ListEvents\","
                           "code=\"200\"}") > 0);
        hub_stop_ok(&h);
}

static bool bmh_has_image(json_object *o, const void *arg)
{
        return streq_ptr(str_at(o, "spec.image.url"), arg);
}

static bool agent_approved(json_object *o, const void *arg)
{
        bool approved = false;

        (void)arg;
        (void)json_get_bool(json_get(o, "spec"), "approved", &approved);
        return approved;
}

static bool agent_approved_by_bmac(json_object *o, const void *arg)
{
        bool approved = false;

        (void)arg;
        (void)json_get_bool(json_get(o, "spec"), "approved", &approved);
        return approved && streq_ptr(str_at(o, "spec.role"), "worker");
}

TEST(bmh_with_annotations_to_an_approved_agent)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-bmac");
        _cleanup_(json_object_putp) json_object *ie = NULL, *agent = NULL, *bmh = NULL;
        _cleanup_free_ char *id = NULL;
        char host[UUID_STRING_MAX];
        Hub h;

        uuid_random(host);
        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "myinfraenv", NULL);
        /* the docs' BMH (baremetal-agent-controller.md) with BMAC's annotations */
        kcreate(c, HUB_KIND_BMH, ns,
                "{\"apiVersion\":\"metal3.io/"
                "v1alpha1\",\"kind\":\"BareMetalHost\",\"metadata\":{\"name\":\"ostest-worker-0\","
                "\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"},\"annotations\":{"
                "\"bmac.agent-install.openshift.io/role\":\"worker\","
                "\"bmac.agent-install.openshift.io/hostname\":\"worker-0.example.test\","
                "\"bmac.agent-install.openshift.io/"
                "installer-args\":\"[\\\"--append-karg\\\",\\\"console=ttyS0\\\"]\","
                "\"bmac.agent-install.openshift.io.node-label.node-role.kubernetes.io/infra\":\"\"}},"
                "\"spec\":{\"online\":false,\"bootMACAddress\":\"00:EC:EE:F8:5A:BA\","
                "\"automatedCleaningMode\":\"disabled\","
                "\"bmc\":{\"address\":\"redfish://198.51.100.5/redfish/v1/Systems/"
                "1\",\"credentialsName\":\"bmc-secret\"}}}");
        /* what BMO would report: the host is ready to be provisioned */
        kpatch(c, HUB_KIND_BMH, ns, "ostest-worker-0", true,
               "{\"status\":{\"operationalStatus\":\"OK\",\"poweredOn\":false,\"errorCount\":0,"
               "\"errorMessage\":\"\",\"hardwareProfile\":\"\",\"provisioning\":{\"ID\":"
               "\"x\",\"state\":\"ready\"}}}");
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "myinfraenv", &h);
        ie = kget(c, HUB_KIND_INFRAENV, ns, "myinfraenv");
        /* after the image's cool-down the BMH gets it */
        bmh = wait_for(c, HUB_KIND_BMH, ns, "ostest-worker-0", bmh_has_image,
                       str_at(ie, "status.isoDownloadURL"), 60, &h);
        ASSERT_STREQ(str_at(bmh, "spec.image.format"), "live-iso");
        ASSERT_STREQ(hub_object_annotation(bmh, "inspect.metal3.io"), "disabled");
        ASSERT_TRUE(hub_object_has_finalizer(bmh, HUB_FINALIZER_BMAC));
        /* the host boots it and registers with the BMH's boot MAC */
        register_host(id, host, "00:ec:ee:f8:5a:ba", "198.51.100.70", "ostest-worker-0");
        agent = wait_for(c, HUB_KIND_AGENT, ns, host, agent_approved_by_bmac, NULL, 120, &h);
        ASSERT_STREQ(str_at(agent, "spec.hostname"), "worker-0.example.test");
        ASSERT_STREQ(str_at(agent, "spec.installerArgs"), "[\"--append-karg\",\"console=ttyS0\"]");
        ASSERT_STREQ(
                json_get_string(json_get_path(agent, "spec.nodeLabels"), "node-role.kubernetes.io/infra"),
                "");
        ASSERT_STREQ(hub_object_label(agent, HUB_LABEL_BMH), "ostest-worker-0");
        json_object_put(bmh);
        bmh = wait_for(c, HUB_KIND_BMH, ns, "ostest-worker-0", has_path, "metadata.annotations", 60, &h);
        for (int i = 0; i < 600 && !hub_object_annotation(bmh, HUB_BMH_HARDWARE_DETAILS); i++) {
                usleep(100 * 1000);
                json_object_put(bmh);
                bmh = kget(c, HUB_KIND_BMH, ns, "ostest-worker-0");
        }
        ASSERT_CONTAINS(hub_object_annotation(bmh, HUB_BMH_HARDWARE_DETAILS), "\"ip\":\"198.51.100.70\"");
        hub_stop_ok(&h);
}

TEST(preprovisioning_image_ready)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-ppi");
        _cleanup_(json_object_putp) json_object *ppi = NULL, *ie = NULL;
        static const Cond ready = { "ImageReady", "True", "InfraEnvAvailable",
                                    "InfraEnv is available: Image has been created" };
        Hub h;

        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "myinfraenv", NULL);
        kcreate(c, HUB_KIND_PPI, ns,
                "{\"apiVersion\":\"metal3.io/"
                "v1alpha1\",\"kind\":\"PreprovisioningImage\",\"metadata\":{\"name\":\"w0\","
                "\"labels\":{\"infraenvs.agent-install.openshift.io\":\"myinfraenv\"}},"
                "\"spec\":{\"acceptFormats\":[\"iso\"],\"architecture\":\"x86_64\"}}");
        hub_start(&h, ns, (char *[]){ (char *)"--converged-flow", NULL });
        free(ready_infraenv(c, ns, "myinfraenv", &h));
        ppi = wait_for(c, HUB_KIND_PPI, ns, "w0", has_condition, &ready, 60, &h);
        ie = kget(c, HUB_KIND_INFRAENV, ns, "myinfraenv");
        ASSERT_STREQ(str_at(ppi, "status.imageUrl"), str_at(ie, "status.isoDownloadURL"));
        ASSERT_STREQ(str_at(ppi, "status.format"), "iso");
        ASSERT_STREQ(hub_object_annotation(ie, HUB_ANNOTATION_ENABLE_IRONIC), "true");
        hub_stop_ok(&h);
}

TEST(infraenv_deletion_deregisters)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-delete");
        _cleanup_free_ char *id = NULL, *path = NULL;
        char host[UUID_STRING_MAX];
        Hub h;

        uuid_random(host);
        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "doomed", NULL);
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "doomed", &h);
        register_host(id, host, "02:00:00:00:02:01", "198.51.100.81", "doomed-1");
        json_object_put(wait_for(c, HUB_KIND_AGENT, ns, host, agent_with_inventory, NULL, 120, &h));
        ASSERT_OK(
                kube_delete(c, &hub_kind_info(HUB_KIND_INFRAENV)->resource, ns, "doomed", NULL, NULL, NULL));
        json_object_put(wait_for(c, HUB_KIND_INFRAENV, ns, "doomed", absent, NULL, 120, &h));
        path = strdup_printf("/v2/infra-envs/%s", id);
        ASSERT_EQ(service_call("GET", path, NULL, NULL), 404);
        hub_stop_ok(&h);
}

/* A namespace for the case, and the service answering 500 to the next
 * three POSTs to path (a regular expression) */
static const char *failing_registrations(const char *prefix, const char *path)
{
        _cleanup_free_ char *rule = NULL;
        const char *ns;

        need_refservice("fault injection");
        ns = kube_test_namespace(prefix);
        rule = strdup_printf("{\"method\":\"POST\",\"path\":\"%s\",\"status\":500,\"count\":3}", path);
        ASSERT_EQ(control("POST", "/faults", rule, NULL), 200);
        return ns;
}

TEST(service_faults_end_in_backend_errors_and_recover)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns;
        static const Cond backend = { "ImageCreated", "False", "ImageCreationError",
                                      "Failed to create image due to an internal error: *" };
        Hub h;

        ns = failing_registrations("hub-faults", "/v2/infra-envs$");
        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "flaky", NULL);
        hub_start(&h, ns, NULL);
        json_object_put(wait_for(c, HUB_KIND_INFRAENV, ns, "flaky", has_condition, &backend, 60, &h));
        /* it recovers by itself (20 s requeues), nothing lost */
        free(ready_infraenv(c, ns, "flaky", &h));
        ASSERT_EQ(control("DELETE", "/faults", NULL, NULL), 200);
        hub_stop_ok(&h);
}

/* ---- the installation side: ClusterDeployment and AgentClusterInstall ---- */

#define SSH_KEY "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq1Yg6s2pT6fYzKx9k4JQm3m8c0zQ0v8V0f3bq9n8jF t@e"
#define SSH_KEY_2 "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBvPq8GJx3KbJc0u3yGQm5W7FQ9mDqk4f2tD1rS5a7Lx t@f"

/* a ClusterImageSet (cluster-scoped: named after the test's namespace) */
static char *create_image_set(KubeClient *c, const char *ns)
{
        char *name = strdup_printf("%s-4.13", ns);

        kcreate(c, HUB_KIND_CLUSTERIMAGESET, NULL,
                "{\"apiVersion\":\"hive.openshift.io/v1\",\"kind\":\"ClusterImageSet\","
                "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"releaseImage\":"
                "\"quay.io/openshift-release-dev/ocp-release:4.13.18-x86_64\"}}",
                name);
        return name;
}

static void delete_image_set(KubeClient *c, const char *name)
{
        (void)kube_delete(c, &hub_kind_info(HUB_KIND_CLUSTERIMAGESET)->resource, NULL, name, NULL, NULL,
                          NULL);
}

/* The documentation's pair (crds/clusterDeployment.yaml,
 * agentClusterInstall.yaml), three control-plane agents, names of the test's */
static void create_cluster(KubeClient *c, const char *ns, const char *name, const char *pull_secret,
                           const char *image_set)
{
        kcreate(c, HUB_KIND_CLUSTERDEPLOYMENT, ns,
                "{\"apiVersion\":\"hive.openshift.io/v1\",\"kind\":\"ClusterDeployment\","
                "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"baseDomain\":\"hive.example.com\","
                "\"clusterName\":\"%s\",\"clusterInstallRef\":{\"group\":\"extensions.hive.openshift.io\","
                "\"kind\":\"AgentClusterInstall\",\"name\":\"%s-aci\",\"version\":\"v1beta1\"},"
                "\"controlPlaneConfig\":{\"servingCertificates\":{}},"
                "\"platform\":{\"agentBareMetal\":{\"agentSelector\":{\"matchLabels\":"
                "{\"bla\":\"aaa\"}}}},\"pullSecretRef\":{\"name\":\"%s\"}}}",
                name, name, name, pull_secret);
        kcreate(c, HUB_KIND_AGENTCLUSTERINSTALL, ns,
                "{\"apiVersion\":\"extensions.hive.openshift.io/v1beta1\",\"kind\":\"AgentClusterInstall\","
                "\"metadata\":{\"name\":\"%s-aci\"},\"spec\":{\"clusterDeploymentRef\":{\"name\":\"%s\"},"
                "\"imageSetRef\":{\"name\":\"%s\"},\"networking\":{\"clusterNetwork\":[{\"cidr\":"
                "\"10.128.0.0/14\",\"hostPrefix\":23}],\"serviceNetwork\":[\"172.30.0.0/16\"]},"
                "\"provisionRequirements\":{\"controlPlaneAgents\":3},\"sshPublicKey\":\"" SSH_KEY "\"}}",
                name, name, image_set);
}

static const Cond synced = { "SpecSynced", "True", "SyncOK", "SyncOK" };

static char *aci_name(const char *cd)
{
        return strdup_printf("%s-aci", cd);
}

/* Issue 22, Build §1: the Cluster API provider CAPOA pins the
 * ClusterImageSet it makes by digest, without labels (ACM-33187), and owns
 * the ACI by its OpenshiftAssistedControlPlane: the cluster registers with
 * the release the control plane's spec.distributionVersion names, as the
 * service's controller registers the one it reads from the image */
TEST(cluster_of_a_cluster_api_control_plane)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        static const KubeResource oacp_resource =
                KUBE_RESOURCE(HUB_GROUP_CAPI_CONTROL_PLANE, "v1alpha3", HUB_RESOURCE_CAPI_CONTROL_PLANE,
                              HUB_KIND_NAME_CAPI_CONTROL_PLANE, true);
        const char *ns = kube_test_namespace("hub-capi");
        _cleanup_(json_object_putp) json_object *oacp = NULL, *aci = NULL, *cd = NULL, *service = NULL;
        _cleanup_free_ char *imageset = strdup_printf("%s-digest", ns), *an = aci_name("c1"), *path = NULL,
                            *owner = NULL;
        _cleanup_kube_status_ KubeStatus st = {};
        Hub h;

        create_pull_secret(c, ns, false);
        kcreate(c, HUB_KIND_CLUSTERIMAGESET, NULL,
                "{\"apiVersion\":\"hive.openshift.io/v1\",\"kind\":\"ClusterImageSet\","
                "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"releaseImage\":"
                "\"quay.io/openshift-release-dev/ocp-release@sha256:"
                "e5f4a8a3ab2c1f53c0b1e6ad3c8f1ce2b0dd1b30b2b4f0b8e2ed9d7c6b5a4f3e\"}}",
                imageset);
        {
                _cleanup_(json_object_putp) json_object *o = kube_test_json(
                        "{\"apiVersion\":\"controlplane.cluster.x-k8s.io/v1alpha3\",\"kind\":"
                        "\"OpenshiftAssistedControlPlane\",\"metadata\":{\"name\":\"c1\"},\"spec\":{"
                        "\"distributionVersion\":\"4.13.18\",\"replicas\":3,\"config\":{\"baseDomain\":"
                        "\"hive.example.com\"},\"machineTemplate\":{\"infrastructureRef\":{\"apiGroup\":"
                        "\"infrastructure.cluster.x-k8s.io\",\"kind\":\"Metal3MachineTemplate\",\"name\":"
                        "\"c1-controlplane\"}}}}");

                if (kube_create(c, &oacp_resource, ns, o, &oacp, &st) < 0) {
                        if (kube_test_real() && st.code == 404)
                                test_skip("the cluster does not serve %s.%s: apply "
                                          "tests/reference/capoa/controlplane/config/crd/bases",
                                          HUB_RESOURCE_CAPI_CONTROL_PLANE, HUB_GROUP_CAPI_CONTROL_PLANE);
                        test_fail(__FILE__, __LINE__, "cannot create the control plane: %s",
                                  strna(st.message));
                }
        }
        create_cluster(c, ns, "c1", "pull-secret", imageset);
        /* CAPOA's SetOwnerReference on the ACI, before cradle-hub sees it */
        owner = strdup_printf("{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":"
                              "\"controlplane.cluster.x-k8s.io/v1alpha3\",\"kind\":"
                              "\"OpenshiftAssistedControlPlane\",\"name\":\"c1\",\"uid\":\"%s\"}]}}",
                              hub_object_uid(oacp));
        kpatch(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, false, owner);
        hub_start(&h, ns, NULL);
        aci = wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &synced, 120, &h);
        cd = kget(c, HUB_KIND_CLUSTERDEPLOYMENT, ns, "c1");
        path = strdup_printf("/v2/clusters/%s", hub_object_annotation(cd, HUB_ANNOTATION_CLUSTER_ID));
        ASSERT_EQ(service_call("GET", path, NULL, &service), 200);
        ASSERT_TRUE(startswith(strempty(json_get_string(service, "openshift_version")), "4.13"));
        /* CAPOA's owner kept beside the ClusterDeployment's */
        ASSERT_EQ(json_object_array_length(json_get_path(aci, "metadata.ownerReferences")), 2u);
        hub_stop_ok(&h);
        delete_image_set(c, imageset);
}

TEST(cluster_registered_synced_and_deleted)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-cluster");
        _cleanup_(json_object_putp) json_object *aci = NULL, *cd = NULL, *service = NULL;
        _cleanup_free_ char *imageset = NULL, *path = NULL, *an = aci_name("c1");
        static const Cond not_ready = { "RequirementsMet", "False", "ClusterNotReady",
                                        "The cluster is not ready to begin the installation" };
        static const Cond not_completed = { "Completed", "False", "InstallationNotStarted",
                                            "The installation has not yet started" };
        const char *id;
        Hub h;

        create_pull_secret(c, ns, false);
        imageset = create_image_set(c, ns);
        create_cluster(c, ns, "c1", "pull-secret", imageset);
        hub_start(&h, ns, NULL);
        aci = wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &synced, 120, &h);
        json_object_put(
                wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &not_ready, 60, &h));
        json_object_put(
                wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &not_completed, 60, &h));
        cd = kget(c, HUB_KIND_CLUSTERDEPLOYMENT, ns, "c1");
        ASSERT_TRUE(hub_object_has_finalizer(cd, HUB_FINALIZER_CD));
        ASSERT_TRUE(hub_object_has_finalizer(aci, HUB_FINALIZER_ACI));
        ASSERT_STREQ(
                str_at(json_object_array_get_idx(json_get_path(aci, "metadata.ownerReferences"), 0), "kind"),
                "ClusterDeployment");
        id = hub_object_annotation(cd, HUB_ANNOTATION_CLUSTER_ID);
        ASSERT_TRUE(uuid_is_valid(id));
        /* no Agent, no URL of the service's to take its public base from:
         * the ACI's eventsURL comes with the first bound Agent
         * (debug_links_on_the_public_base_url) */
        ASSERT_NULL(str_at(aci, "status.debugInfo.eventsURL"));
        ASSERT_NOT_NULL(str_at(aci, "status.debugInfo.state"));
        /* the service's cluster, as the spec says */
        path = strdup_printf("/v2/clusters/%s", id);
        ASSERT_EQ(service_call("GET", path, NULL, &service), 200);
        ASSERT_STREQ(json_get_string(service, "name"), "c1");
        ASSERT_STREQ(json_get_string(service, "base_dns_domain"), "hive.example.com");
        ASSERT_STREQ(json_get_string(service, "ssh_public_key"), SSH_KEY);
        ASSERT_STREQ(json_get_string(service, "high_availability_mode"), "Full");
        ASSERT_TRUE(startswith(strempty(json_get_string(service, "openshift_version")), "4.13"));
        /* the pull secret is watched now */
        {
                _cleanup_(json_object_putp) json_object *secret =
                        kget(c, HUB_KIND_SECRET, ns, "pull-secret");

                ASSERT_STREQ(hub_object_label(secret, HUB_LABEL_WATCH), "true");
        }
        /* a spec change reaches the service */
        kpatch(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, false,
               "{\"spec\":{\"sshPublicKey\":\"" SSH_KEY_2 "\"}}");
        for (int i = 0; i < 600; i++) {
                json_object_put(service);
                service = NULL;
                if (service_call("GET", path, NULL, &service) == 200 &&
                    streq_ptr(json_get_string(service, "ssh_public_key"), SSH_KEY_2))
                        break;
                usleep(100 * 1000);
        }
        ASSERT_STREQ(json_get_string(service, "ssh_public_key"), SSH_KEY_2);
        /* deletion: both objects go, the cluster is deregistered */
        ASSERT_OK(kube_delete(c, &hub_kind_info(HUB_KIND_CLUSTERDEPLOYMENT)->resource, ns, "c1", NULL, NULL,
                              NULL));
        json_object_put(wait_for(c, HUB_KIND_CLUSTERDEPLOYMENT, ns, "c1", absent, NULL, 120, &h));
        json_object_put(wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, absent, NULL, 120, &h));
        ASSERT_EQ(service_call("GET", path, NULL, NULL), 404);
        hub_stop_ok(&h);
        delete_image_set(c, imageset);
}

TEST(cluster_input_errors)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-cinputs");
        _cleanup_free_ char *imageset = strdup_printf("%s-4.13", ns), *an = aci_name("bad"),
                            *msg = strdup_printf("The Spec could not be synced due to backend error: "
                                                 "ClusterImageSet %s not found. Please ensure the "
                                                 "ClusterImageSet exists",
                                                 imageset);
        static const Cond no_secret = {
                "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: failed to find secret pull-secret: *"
        };
        const Cond no_imageset = { "SpecSynced", "False", "BackendError", msg };
        static const Cond bad_override = { "SpecSynced", "False", "InputError",
                                           "The Spec could not be synced due to an input error: *" };
        Hub h;

        create_cluster(c, ns, "bad", "pull-secret", imageset);
        hub_start(&h, ns, NULL);
        json_object_put(
                wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &no_secret, 60, &h));
        /* the secret arrives (labelled, so that its creation is seen) */
        create_pull_secret(c, ns, true);
        json_object_put(
                wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &no_imageset, 60, &h));
        /* the ClusterImageSet arrives */
        free(create_image_set(c, ns));
        json_object_put(wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &synced, 120, &h));
        /* an install-config override the service refuses */
        kpatch(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, false,
               "{\"metadata\":{\"annotations\":{\"" HUB_ANNOTATION_INSTALL_CONFIG_OVERRIDES
               "\":\"{\\\"fips\\\": \\\"not a bool\\\"\"}}}");
        json_object_put(
                wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &bad_override, 60, &h));
        kpatch(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, false,
               "{\"metadata\":{\"annotations\":{\"" HUB_ANNOTATION_INSTALL_CONFIG_OVERRIDES "\":null}}}");
        json_object_put(wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &synced, 60, &h));
        hub_stop_ok(&h);
        delete_image_set(c, imageset);
}

TEST(cluster_service_faults_end_in_backend_errors_and_recover)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_free_ char *imageset = NULL, *an = aci_name("flaky");
        static const Cond backend = { "SpecSynced", "False", "BackendError",
                                      "The Spec could not be synced due to backend error: *" };
        const char *ns;
        Hub h;

        ns = failing_registrations("hub-cfaults", "/v2/clusters$");
        create_pull_secret(c, ns, true);
        imageset = create_image_set(c, ns);
        create_cluster(c, ns, "flaky", "pull-secret", imageset);
        hub_start(&h, ns, NULL);
        json_object_put(wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &backend, 60, &h));
        /* bounded requeues: it recovers by itself */
        json_object_put(wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &synced, 120, &h));
        ASSERT_EQ(control("DELETE", "/faults", NULL, NULL), 200);
        hub_stop_ok(&h);
        delete_image_set(c, imageset);
}

/* ---- which service, which release (issue 23) ---- */

/* A reference service of the case's own playing an API generation
 * (refservice.py --api-generation); its URL. */
static char *start_generation(const char *generation, int *ret_pid)
{
        _cleanup_free_ char *script = test_src_path("tests/service/refservice.py"), *port_file = NULL;
        char id[UUID_STRING_MAX];
        unsigned port = 0;

        need_refservice("a second reference service playing one API generation");
        uuid_random(id);
        port_file = strdup_printf("%s/refservice-%s-%.8s-port", test_tmpdir(), generation, id);
        ASSERT_OK(test_server_start((char *[]){ (char *)"/usr/bin/python3", script, (char *)"--port",
                                                (char *)"0", (char *)"--port-file", port_file,
                                                (char *)"--api-generation", (char *)generation,
                                                (char *)"--quiet", NULL },
                                    port_file, ret_pid, &port));
        return strdup_printf("http://127.0.0.1:%u", port);
}

/* the v2RegisterCluster answers the service at url gave with status */
static unsigned registrations(const char *url, long status, const char *message)
{
        _cleanup_(json_object_putp) json_object *recs = NULL;
        unsigned n = 0;

        ASSERT_EQ(control_at(url, "GET", "/requests?operation=v2RegisterCluster", NULL, &recs), 200);
        for (size_t i = 0; i < hub_json_array_length(recs); i++) {
                json_object *rec = json_object_array_get_idx(recs, i);
                int64_t st = 0;

                (void)json_get_int64(rec, "status", &st);
                if (st == status && (!message || streq_ptr(str_at(rec, "response.message"), message)))
                        n++;
        }
        return n;
}

/* the registrations it refused for a field its model lacks, with
 * go-swagger's text */
static unsigned refusals(const char *url, const char *field)
{
        _cleanup_free_ char *m = strdup_printf(
                "parsing newClusterParams body from \"\" failed, because json: unknown field \"%s\"", field);

        return registrations(url, 400, m);
}

static void aci_spec(KubeClient *c, const char *ns, const char *cd, const char *spec)
{
        _cleanup_free_ char *an = aci_name(cd), *patch = strdup_printf("{\"spec\":%s}", spec);

        kpatch(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, false, patch);
}

#define VIPS "\"apiVIPs\":[\"198.51.100.100\"],\"ingressVIPs\":[\"198.51.100.101\"]"

/* A case against a service of one API generation: its refservice, a
 * namespace, the pull secret, a ClusterImageSet, the ClusterDeployment c3
 * (three control-plane agents, VIPs), more ClusterDeployments by the case,
 * then cradle-hub pointed at that service. */
typedef struct GenerationLab {
        char *url, *imageset;
        const char *ns;
        int pid;
        Hub hub;
} GenerationLab;

static void generation_lab(KubeClient *c, const char *generation, GenerationLab *ret)
{
        _cleanup_free_ char *prefix = strdup_printf("hub-gen%s", generation);

        *ret = (GenerationLab){};
        ret->url = start_generation(generation, &ret->pid);
        ret->ns = kube_test_namespace(prefix);
        create_pull_secret(c, ret->ns, true);
        ret->imageset = create_image_set(c, ret->ns);
        create_cluster(c, ret->ns, "c3", "pull-secret", ret->imageset);
        aci_spec(c, ret->ns, "c3", "{" VIPS "}");
}

static void generation_lab_start(GenerationLab *lab)
{
        hub_service_override = lab->url;
        hub_start(&lab->hub, lab->ns, NULL);
        hub_service_override = NULL;
}

/* the service's cluster of a ClusterDeployment synced there */
static json_object *generation_lab_cluster(KubeClient *c, GenerationLab *lab, const char *name)
{
        _cleanup_(json_object_putp) json_object *cd = NULL;
        _cleanup_free_ char *an = aci_name(name), *path = NULL;
        json_object *cluster = NULL;

        json_object_put(wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, lab->ns, an, has_condition, &synced, 120,
                                 &lab->hub));
        cd = kget(c, HUB_KIND_CLUSTERDEPLOYMENT, lab->ns, name);
        path = strdup_printf("/v2/clusters/%s",
                             strempty(hub_object_annotation(cd, HUB_ANNOTATION_CLUSTER_ID)));
        ASSERT_EQ(service_call_at(lab->url, "GET", path, NULL, &cluster), 200);
        return cluster;
}

static void generation_lab_done(KubeClient *c, GenerationLab *lab)
{
        hub_stop_ok(&lab->hub);
        delete_image_set(c, lab->imageset);
        test_server_stop(lab->pid);
        free(lab->url);
        free(lab->imageset);
}

/* The late-2023 service refuses control_plane_count (go-swagger's strict
 * decoding): cradle-hub learns it from that refusal, registers with
 * high_availability_mode, and says what that API cannot install. */
TEST(cluster_on_a_late_2023_service)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_(json_object_putp) json_object *cluster = NULL;
        _cleanup_free_ char *a5 = aci_name("c5");
        static const Cond cannot = {
                "SpecSynced", "False", "InputError",
                "The Spec could not be synced due to an input error: this assisted-service does not know "
                "control_plane_count (its cluster API is the late-2023 one: high_availability_mode Full "
                "for three control-plane nodes, None for a single node without workers): "
                "spec.provisionRequirements.controlPlaneAgents 5 with 0 workerAgents cannot be installed "
                "by it"
        };
        GenerationLab lab;

        generation_lab(c, "2023", &lab);
        create_cluster(c, lab.ns, "c5", "pull-secret", lab.imageset);
        aci_spec(c, lab.ns, "c5", "{\"provisionRequirements\":{\"controlPlaneAgents\":5}," VIPS "}");
        generation_lab_start(&lab);
        /* the service's cluster: the late-2023 shape */
        cluster = generation_lab_cluster(c, &lab, "c3");
        ASSERT_STREQ(json_get_string(cluster, "high_availability_mode"), "Full");
        ASSERT_NULL(json_get(cluster, "control_plane_count"));
        ASSERT_STREQ(json_get_string(cluster, "api_vip"), "198.51.100.100");
        json_object_put(wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, lab.ns, a5, has_condition, &cannot, 120,
                                 &lab.hub));
        /* one refusal taught it, with the issue's text; one registration */
        ASSERT_EQ(refusals(lab.url, "control_plane_count"), 1);
        ASSERT_EQ(registrations(lab.url, 400, NULL), 1);
        ASSERT_EQ(registrations(lab.url, 201, NULL), 1);
        generation_lab_done(c, &lab);
}

/* The late-2023 infra-env models lack network_discovery_delay_seconds and
 * ntp_sources: a delay of 0 registers without it, exclusive NTP sources are
 * the user's input error, said once. */
TEST(infraenv_on_a_late_2023_service)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        static const Cond cannot = {
                "ImageCreated", "False", "ImageCreationError",
                "Failed to create image: this assisted-service does not know ntp_sources (its API is the "
                "late-2023 one): spec.ntpSources cannot replace the hosts' NTP sources there; "
                "spec.additionalNTPSources adds to them"
        };
        GenerationLab lab;

        generation_lab(c, "2023", &lab);
        create_infraenv(c, lab.ns, "delay", ",\"networkDiscoveryDelaySeconds\":0");
        create_infraenv(c, lab.ns, "ntp", ",\"ntpSources\":[\"198.51.100.1\"]");
        generation_lab_start(&lab);
        free(ready_infraenv(c, lab.ns, "delay", &lab.hub));
        json_object_put(
                wait_for(c, HUB_KIND_INFRAENV, lab.ns, "ntp", has_condition, &cannot, 120, &lab.hub));
        generation_lab_done(c, &lab);
}

/* On whichever service is found (CRADLE_TEST_SERVICE_URL too): an InfraEnv
 * every generation can express registers, whatever the hub knew first. */
TEST(infraenv_with_fields_of_either_generation)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-iegen");
        _cleanup_(json_object_putp) json_object *service = NULL;
        _cleanup_free_ char *id = NULL, *path = NULL;
        Hub h;

        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "either",
                        ",\"networkDiscoveryDelaySeconds\":0,"
                        "\"additionalNTPSources\":[\"198.51.100.1\"]");
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "either", &h);
        path = strdup_printf("/v2/infra-envs/%s", id);
        ASSERT_EQ(service_call("GET", path, NULL, &service), 200);
        ASSERT_STREQ(json_get_string(service, "additional_ntp_sources"), "198.51.100.1");
        hub_stop_ok(&h);
}

/* A current service refuses the singular api_vip the late-2023 one wants:
 * learnt the same way, and its cluster keeps the count. */
TEST(cluster_on_a_current_service)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_(json_object_putp) json_object *cluster = NULL;
        int64_t count = 0;
        GenerationLab lab;

        generation_lab(c, "head", &lab);
        generation_lab_start(&lab);
        cluster = generation_lab_cluster(c, &lab, "c3");
        ASSERT_OK(json_get_int64(cluster, "control_plane_count", &count));
        ASSERT_EQ(count, 3);
        ASSERT_NULL(json_get(cluster, "api_vip"));
        ASSERT_EQ(refusals(lab.url, "api_vip"), 1);
        ASSERT_EQ(registrations(lab.url, 201, NULL), 1);
        generation_lab_done(c, &lab);
}

static bool cluster_named(json_object *clusters, const char *name)
{
        for (size_t i = 0; i < hub_json_array_length(clusters); i++)
                if (streq_ptr(json_get_string(json_object_array_get_idx(clusters, i), "name"), name))
                        return true;
        return false;
}

/* A ClusterImageSet pinning a z-stream the service does not list is never
 * registered (the late-2023 service would install its default z-stream
 * instead); one pinned by digest registers by the version its label
 * states. Against whichever service is found (CRADLE_TEST_SERVICE_URL
 * too): the release is made up from what it lists. */
TEST(cluster_release_as_the_image_set_asks)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_(json_object_putp) json_object *versions = NULL, *clusters = NULL, *cd = NULL,
                                                *cluster = NULL, *aci = NULL;
        _cleanup_free_ char *offered = NULL, *unlisted = NULL, *pinned_set = NULL, *digest_set = NULL,
                            *pinned = NULL, *by_digest = NULL, *an = NULL, *msg = NULL, *path = NULL;
        const char *ns = kube_test_namespace("hub-release"), *cond_msg;
        char id[UUID_STRING_MAX];
        unsigned major = 0, minor = 0;
        Cond refused = { "SpecSynced", "False", "InputError", NULL };
        Hub h;

        /* a release the service offers for x86_64, and one of its x.y it does not */
        ASSERT_EQ(service_call("GET", "/v2/openshift-versions", NULL, &versions), 200);
        json_object_object_foreach (versions, key, entry) {
                json_object *archs = json_get(entry, "cpu_architectures");

                (void)key;
                for (size_t i = 0; !offered && i < hub_json_array_length(archs); i++)
                        if (streq_ptr(json_object_get_string(json_object_array_get_idx(archs, i)),
                                      "x86_64") &&
                            hub_json_array_length(archs) == 1)
                                offered = strdup(strempty(json_get_string(entry, "display_name")));
        }
        if (!offered || sscanf(offered, "%u.%u", &major, &minor) != 2)
                test_skip("the service offers no x86_64 release");
        unlisted = strdup_printf("%u.%u.987", major, minor);
        uuid_random(id);
        pinned = strdup_printf("pinned-%.8s", id);
        by_digest = strdup_printf("digest-%.8s", id);
        pinned_set = strdup_printf("%s-pinned", ns);
        digest_set = strdup_printf("%s-digest", ns);
        kcreate(c, HUB_KIND_CLUSTERIMAGESET, NULL,
                "{\"apiVersion\":\"hive.openshift.io/"
                "v1\",\"kind\":\"ClusterImageSet\",\"metadata\":{\"name\":"
                "\"%s\"},\"spec\":{\"releaseImage\":\"quay.io/openshift-release-dev/"
                "ocp-release:%s-x86_64\"}}",
                pinned_set, unlisted);
        kcreate(c, HUB_KIND_CLUSTERIMAGESET, NULL,
                "{\"apiVersion\":\"hive.openshift.io/"
                "v1\",\"kind\":\"ClusterImageSet\",\"metadata\":{\"name\":"
                "\"%s\",\"labels\":{\"" HUB_LABEL_CIS_OPENSHIFT_VERSION
                "\":\"%s\"}},\"spec\":{\"releaseImage\":"
                "\"mirror.example.com/ocp/release@sha256:"
                "5e0e8f23e4b1f2e1c2d0b9a8f7e6d5c4b3a29180716253443526170819fedcba\"}}",
                digest_set, offered);
        create_pull_secret(c, ns, true);
        create_cluster(c, ns, pinned, "pull-secret", pinned_set);
        create_cluster(c, ns, by_digest, "pull-secret", digest_set);
        hub_start(&h, ns, NULL);
        /* the unlisted z-stream: an input error naming both releases */
        msg = strdup_printf(
                "The Spec could not be synced due to an input error: ClusterImageSet %s asks for "
                "release %s (x86_64), which assisted-service does not offer (it offers *",
                pinned_set, unlisted);
        refused.message = msg;
        an = aci_name(pinned);
        aci = wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &refused, 120, &h);
        cond_msg = json_get_string(hub_conditions_find(aci, "SpecSynced"), "message");
        ASSERT_CONTAINS(strempty(cond_msg), offered);
        /* the digest, by its label: registered with that release */
        free(an);
        an = aci_name(by_digest);
        json_object_put(wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &synced, 120, &h));
        cd = kget(c, HUB_KIND_CLUSTERDEPLOYMENT, ns, by_digest);
        path = strdup_printf("/v2/clusters/%s",
                             strempty(hub_object_annotation(cd, HUB_ANNOTATION_CLUSTER_ID)));
        ASSERT_EQ(service_call("GET", path, NULL, &cluster), 200);
        ASSERT_STREQ(json_get_string(cluster, "openshift_version"), offered);
        /* nothing was registered for the unlisted one */
        ASSERT_EQ(service_call("GET", "/v2/clusters", NULL, &clusters), 200);
        ASSERT_FALSE(cluster_named(clusters, pinned));
        ASSERT_TRUE(cluster_named(clusters, by_digest));
        /* the service's clusters go with their ClusterDeployments */
        ASSERT_OK(kube_delete(c, &hub_kind_info(HUB_KIND_CLUSTERDEPLOYMENT)->resource, ns, by_digest, NULL,
                              NULL, NULL));
        json_object_put(wait_for(c, HUB_KIND_CLUSTERDEPLOYMENT, ns, by_digest, absent, NULL, 120, &h));
        hub_stop_ok(&h);
        delete_image_set(c, pinned_set);
        delete_image_set(c, digest_set);
}

/* ---- RBAC: packaging/hub/rbac.yaml grants every request cradle-hub made ---- */

static bool rule_grants(json_object *rule, const char *group, const char *resource, const char *verb)
{
        json_object *groups = json_get(rule, "apiGroups"), *resources = json_get(rule, "resources"),
                    *verbs = json_get(rule, "verbs");
        bool g = false, r = false, v = false;

        for (size_t i = 0; i < hub_json_array_length(groups); i++)
                g = g || streq_ptr(json_object_get_string(json_object_array_get_idx(groups, i)), group);
        for (size_t i = 0; i < hub_json_array_length(resources); i++)
                r = r ||
                    streq_ptr(json_object_get_string(json_object_array_get_idx(resources, i)), resource);
        for (size_t i = 0; i < hub_json_array_length(verbs); i++)
                v = v || streq_ptr(json_object_get_string(json_object_array_get_idx(verbs, i)), verb);
        return g && r && v;
}

/* ---- issue 23: findings 2, 8 and 9 (bounded texts and writes, the
 * debug links' base, restarts and copies) ---- */

static size_t count_in(const char *text, const char *needle)
{
        size_t n = 0;

        for (const char *p = text ? strstr(text, needle) : NULL; p; p = strstr(p + 1, needle))
                n++;
        return n;
}

/* the test kube-apiserver's requests: PATCHes of name's status by cradle-hub */
static unsigned status_patches(const char *ns, const char *resource, const char *name)
{
        _cleanup_(json_object_putp) json_object *log = NULL;
        json_object *items;
        unsigned n = 0;

        ASSERT_EQ(kube_test_ctl("GET", "/requests", NULL, &log), 200);
        items = json_get(log, "requests");
        for (size_t i = 0; i < hub_json_array_length(items); i++) {
                json_object *e = json_object_array_get_idx(items, i);

                if (startswith(strempty(json_get_string(e, "userAgent")), "cradle-hub/") &&
                    streq_ptr(json_get_string(e, "verb"), "patch") &&
                    streq_ptr(json_get_string(e, "resource"), resource) &&
                    streq_ptr(json_get_string(e, "subresource"), "status") &&
                    streq_ptr(json_get_string(e, "namespace"), ns) &&
                    streq_ptr(json_get_string(e, "name"), name))
                        n++;
        }
        return n;
}

static bool condition_message_set(json_object *o, const void *arg)
{
        return o && !isempty(json_get_string(hub_conditions_find(o, arg), "message"));
}

/* Finding 2: the service answers a registration with an error text of
 * several MB (3,960 NMStateConfigs made 2.6 MB): the condition carries its
 * beginning and how much was cut, the log all of it, the InfraEnv is
 * written once (a real apiserver refuses the whole text, and cradle-hub
 * retried that forever) */
TEST(service_error_text_of_megabytes_bounded)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_(json_object_putp) json_object *ie = NULL, *rule = NULL, *body = NULL;
        _cleanup_free_ char *huge = NULL, *log = NULL;
        const size_t n = 3 * 1024 * 1024;
        const char *ns, *msg;
        double writes;
        Hub h;

        need_refservice("fault injection");
        ns = kube_test_namespace("hub-huge");
        huge = malloc(n + 1);
        ASSERT_NOT_NULL(huge);
        for (size_t i = 0; i < n; i++)
                huge[i] = (char)('a' + i % 26);
        memcpy(huge + n - 16, "END-OF-THE-TEXT.", 16);
        huge[n] = 0;
        /* the service's models.Error, every registration */
        rule = json_new_object();
        body = json_new_object();
        ASSERT_OK(json_add_string(rule, "method", "POST"));
        ASSERT_OK(json_add_string(rule, "path", "/v2/infra-envs$"));
        ASSERT_OK(json_add_int64(rule, "status", 400));
        json_object_object_add(rule, "count", NULL); /* every one */
        ASSERT_OK(json_add_string(body, "code", "400"));
        ASSERT_OK(json_add_string(body, "href", ""));
        ASSERT_OK(json_add_int64(body, "id", 400));
        ASSERT_OK(json_add_string(body, "kind", "Error"));
        ASSERT_OK(json_add_string(body, "reason", huge));
        ASSERT_OK(json_add(rule, "body", json_object_get(body)));
        ASSERT_EQ(control("POST", "/faults", json_object_to_json_string_ext(rule, JSON_C_TO_STRING_PLAIN),
                          NULL),
                  200);

        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "huge", NULL);
        hub_start(&h, ns, NULL);
        ie = wait_for(c, HUB_KIND_INFRAENV, ns, "huge", condition_message_set, "ImageCreated", 60, &h);
        msg = json_get_string(hub_conditions_find(ie, "ImageCreated"), "message");
        ASSERT_TRUE(startswith(msg, "Failed to create image: abcdefghijklmnopqrstuvwxyzabcdef"));
        ASSERT_TRUE(strlen(msg) <= 32768);
        ASSERT_CONTAINS(msg, "bytes cut]");
        /* a few polls and events later: nothing written again */
        writes = metric(
                &h, "cradle_hub_writes_total{controller=\"infraenv\",verb=\"status\",kind=\"InfraEnv\"}");
        sleep(4);
        ASSERT_TRUE(metric(&h, "cradle_hub_writes_total{controller=\"infraenv\",verb=\"status\",kind="
                               "\"InfraEnv\"}") == writes);
        ASSERT_TRUE(writes <= 2);
        ASSERT_EQ(control("DELETE", "/faults", NULL, NULL), 200);
        /* the log has the whole text, secrets scrubbed as always */
        log = hub_log(&h);
        ASSERT_CONTAINS(log, "END-OF-THE-TEXT.");
        ASSERT_CONTAINS(log, "with a 3145728-byte text");
        hub_stop_ok(&h);
}

/* Finding 2: a status write the API server refuses for its size (etcd's
 * "request is too large") is logged once and never sent again unchanged
 * (it was retried with back-off, forever); of a status, the conditions
 * alone are written when they fit */
TEST(status_refused_for_its_size_not_sent_again)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_(json_object_putp) json_object *fault = NULL, *ie = NULL;
        _cleanup_free_ char *rule = NULL, *path = NULL, *log = NULL;
        static const Cond created = { "ImageCreated", "True", "InfraEnvAvailable", NULL };
        const char *ns;
        unsigned first;
        Hub h;

        if (kube_test_real())
                test_skip("needs the test kube-apiserver's fault injection; CRADLE_TEST_KUBECONFIG is set");
        ns = kube_test_namespace("hub-toolarge");
        create_pull_secret(c, ns, true);
        /* the first status write of "once" refused, as etcd refuses a
         * request over its limit: the conditions alone go through */
        rule = strdup_printf(
                "{\"match\":{\"verb\":\"patch\",\"resource\":\"infraenvs\",\"subresource\":\"status\","
                "\"namespace\":\"%s\",\"name\":\"once\"},\"code\":500,"
                "\"message\":\"etcdserver: request is too large\",\"count\":1}",
                ns);
        ASSERT_EQ(kube_test_ctl("POST", "/faults", rule, NULL), 200);
        create_infraenv(c, ns, "once", NULL);
        hub_start(&h, ns, NULL);
        ie = wait_for(c, HUB_KIND_INFRAENV, ns, "once", has_condition, &created, 120, &h);
        ASSERT_NULL(str_at(ie, "status.isoDownloadURL"));
        ASSERT_EQ(status_patches(ns, "infraenvs", "once"), 2u);
        /* every status write of "always" refused */
        free(rule);
        rule = strdup_printf(
                "{\"match\":{\"verb\":\"patch\",\"resource\":\"infraenvs\",\"subresource\":\"status\","
                "\"namespace\":\"%s\",\"name\":\"always\"},\"code\":500,"
                "\"message\":\"etcdserver: request is too large\",\"count\":0}",
                ns);
        ASSERT_EQ(kube_test_ctl("POST", "/faults", rule, &fault), 200);
        create_infraenv(c, ns, "always", NULL);
        for (int i = 0; i < 300 && status_patches(ns, "infraenvs", "always") < 2; i++)
                usleep(100 * 1000);
        first = status_patches(ns, "infraenvs", "always");
        ASSERT_EQ(first, 2u); /* the whole, then its conditions alone */
        /* back-off retries would be 0.25, 0.5, 1, 2, 4 s apart */
        sleep(8);
        ASSERT_EQ(status_patches(ns, "infraenvs", "always"), first);
        /* and the statuses "once" did not get are not sent again either */
        ASSERT_EQ(status_patches(ns, "infraenvs", "once"), 2u);
        log = hub_log(&h);
        ASSERT_EQ(count_in(log, "refused the status of InfraEnv"), 2u); /* once each */
        path = strdup_printf("/faults/%" PRId64, json_object_get_int64(json_get(fault, "id")));
        (void)kube_test_ctl("DELETE", path, NULL, NULL);
        hub_stop_ok(&h);
}

/* the service's public base URL and whether it signs: from a URL it hands out */
static void service_link_base(const char *presigned, char **ret_base, bool *ret_signed)
{
        const char *api = strstr(strempty(presigned), "/api/assisted-install/");

        ASSERT_NOT_NULL(api);
        *ret_base = strndup(presigned, (size_t)(api - presigned));
        *ret_signed = strstr(presigned, "api_key=") != NULL;
}

static void assert_link(const char *link, const char *base, const char *path_query, bool signed_,
                        const char *id)
{
        _cleanup_free_ char *prefix = strdup_printf("%s/api/assisted-install/v2/%s", base, path_query);

        if (!startswith(strempty(link), prefix))
                test_fail(__FILE__, __LINE__, "%s does not start with %s", strna(link), prefix);
        ASSERT_CONTAINS(link, id);
        ASSERT_EQ(strstr(link, "api_key=") != NULL, signed_);
}

/* value of key in the query of url (as it stands, not unescaped: the
 * service's tokens and ids need no escaping), or NULL */
static char *query_value(const char *url, const char *key)
{
        const char *q = strchr(strempty(url), '?');
        size_t n = strlen(key);

        for (const char *p = q; p; p = strchr(p + 1, '&'))
                if (strneq(p + 1, key, n) && p[1 + n] == '=')
                        return strndup(p + 2 + n, strcspn(p + 2 + n, "&#"));
        return NULL;
}

/* Issue 22, Build §1: the Cluster API bootstrap provider (CAPOA,
 * assistedinstaller/infraenv.go GetIgnitionURLFromInfraEnv) builds the
 * discovery ignition's URL from the InfraEnv's eventsURL alone: its scheme
 * and host, the infra_env_id and api_key of its query (an error without
 * either), /api/assisted-install/v2/infra-envs/<id>/downloads/files?
 * api_key=<key>&file_name=discovery.ign; then GETs it with no other
 * credential and wants 200. So does this, at service_url. */
static void assert_capoa_gets_discovery_ignition(const char *service_url, const char *events)
{
        _cleanup_(http_client_freep) HttpClient *hc = NULL;
        _cleanup_http_response_ HttpResponse resp = {};
        _cleanup_(json_object_putp) json_object *ign = NULL;
        _cleanup_free_ char *key = query_value(events, "api_key"), *id = query_value(events, "infra_env_id"),
                            *path = NULL, *err = NULL;
        const char *host = strstr(strempty(events), "://");

        if (!key)
                test_fail(__FILE__, __LINE__, "CAPOA: no api_key found in the eventsURL %s", strna(events));
        ASSERT_NOT_NULL(id);
        ASSERT_NOT_NULL(host);
        /* scheme and host only: CAPOA drops any path before /api */
        path = strdup_printf("/api/assisted-install/v2/infra-envs/%s/downloads/files?api_key=%s"
                             "&file_name=discovery.ign",
                             id, key);
        ASSERT_OK(http_client_new(&(HttpClientOptions){ .base_url = service_url }, &hc, &err));
        ASSERT_OK(http_request(hc, &(HttpRequest){ .method = "GET", .path = path }, &resp, &err));
        ASSERT_EQ(resp.status, 200);
        ASSERT_OK(json_parse(resp.body, resp.body_len, BUF_MAX_HTTP_BODY, &ign, NULL));
        ASSERT_NOT_NULL(json_get_string(json_get(ign, "ignition"), "version"));
}

/* Finding 8: the eventsURL of an InfraEnv, of its bound Agent and of the
 * cluster's ACI on the service's public base URL (the one in its
 * presigned URLs), signed as the service signs them */
TEST(debug_links_on_the_public_base_url)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-links");
        _cleanup_free_ char *imageset = NULL, *an = aci_name("c1"), *id = NULL, *path = NULL, *base = NULL,
                            *spec = NULL;
        _cleanup_(json_object_putp) json_object *pre = NULL, *ie = NULL, *agent = NULL, *aci = NULL,
                                                *cd = NULL;
        char host[UUID_STRING_MAX];
        bool signed_;
        Hub h;

        service_url();
        if (!svc.real) {
                /* the reference service plays one whose SERVICE_BASE_URL is
                 * another name than the address cradle-hub uses */
                _cleanup_free_ char *settings = strdup_printf(
                        "{\"service_base_url\":\"http://localhost:%s\"}", strrchr(svc.url, ':') + 1);

                ASSERT_EQ(control("POST", "/settings", settings, NULL), 200);
        }
        create_pull_secret(c, ns, true);
        imageset = create_image_set(c, ns);
        create_cluster(c, ns, "c1", "pull-secret", imageset);
        spec = strdup_printf(",\"clusterRef\":{\"name\":\"c1\",\"namespace\":\"%s\"}", ns);
        create_infraenv(c, ns, "bound", spec);
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "bound", &h);
        path = strdup_printf("/v2/infra-envs/%s/downloads/files-presigned?file_name=discovery.ign", id);
        ASSERT_EQ(service_call("GET", path, NULL, &pre), 200);
        service_link_base(json_get_string(pre, "url"), &base, &signed_);
        if (!svc.real)
                ASSERT_TRUE(startswith(base, "http://localhost:"));
        ie = kget(c, HUB_KIND_INFRAENV, ns, "bound");
        assert_link(str_at(ie, "status.debugInfo.eventsURL"), base, "events?", signed_, id);
        /* a service that signs: what the Cluster API provider derives from it opens */
        if (signed_)
                assert_capoa_gets_discovery_ignition(svc.url, str_at(ie, "status.debugInfo.eventsURL"));

        uuid_random(host);
        register_host(id, host, "02:00:00:00:23:08", "198.51.100.88", "links-1");
        agent = wait_for(c, HUB_KIND_AGENT, ns, host, has_path, "status.debugInfo.eventsURL", 120, &h);
        assert_link(str_at(agent, "status.debugInfo.eventsURL"), base, "events?", signed_, host);
        aci = wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_path, "status.debugInfo.eventsURL", 120,
                       &h);
        cd = kget(c, HUB_KIND_CLUSTERDEPLOYMENT, ns, "c1");
        assert_link(str_at(aci, "status.debugInfo.eventsURL"), base, "events?", signed_,
                    hub_object_annotation(cd, HUB_ANNOTATION_CLUSTER_ID));
        hub_stop_ok(&h);
        delete_image_set(c, imageset);
        if (!svc.real)
                ASSERT_EQ(control("POST", "/settings", "{\"service_base_url\":\"\"}", NULL), 200);
}

/* Finding 8, the service's local auth and a public base URL that is not
 * the address cradle-hub uses: the eventsURL is on the public one and
 * carries the infra-env's api_key, which opens it without any other
 * credential */
TEST(debug_links_signed_under_local_auth)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_(http_client_freep) HttpClient *hc = NULL;
        _cleanup_http_response_ HttpResponse resp = {};
        _cleanup_free_ char *script = NULL, *port_file = NULL, *url = NULL, *public = NULL,
                            *token_file = NULL, *scenario = NULL, *events = NULL, *err = NULL,
                            *prefix = NULL, *settings = NULL;
        _cleanup_(json_object_putp) json_object *ie = NULL;
        static const char token[] = "local-auth-t0ken";
        const char *ns;
        unsigned port = 0;
        int pid = 0;
        Hub h;

        need_refservice("a second reference service, with local auth and another public base URL");
        ns = kube_test_namespace("hub-signed");
        script = test_src_path("tests/service/refservice.py");
        port_file = strdup_printf("%s/refservice-signed-port", test_tmpdir());
        scenario = strdup_printf("%s/scenario.json", test_tmpdir());
        ASSERT_OK(test_server_start((char *[]){ (char *)"/usr/bin/python3", script, (char *)"--port",
                                                (char *)"0", (char *)"--port-file", port_file,
                                                (char *)"--scenario", scenario, (char *)"--token",
                                                (char *)token, (char *)"--quiet", NULL },
                                    port_file, &pid, &port));
        url = strdup_printf("http://127.0.0.1:%u", port);
        /* its SERVICE_BASE_URL: another name of the same server */
        public = strdup_printf("http://localhost:%u", port);
        settings = strdup_printf("{\"service_base_url\":\"%s\"}", public);
        ASSERT_OK(http_client_new(&(HttpClientOptions){ .base_url = url }, &hc, &err));
        ASSERT_OK(http_request(hc,
                               &(HttpRequest){ .method = "POST",
                                               .path = "/__control/settings",
                                               .body = settings,
                                               .body_len = strlen(settings) },
                               &resp, &err));
        ASSERT_EQ(resp.status, 200);
        token_file = strdup_printf("%s/refservice-signed-token", test_tmpdir());
        ASSERT_OK(write_file_atomic(token_file, token, strlen(token), 0600));

        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "signed", NULL);
        hub_start(&h, ns,
                  (char *[]){ (char *)"--service-url", url, (char *)"--service-token-file", token_file,
                              NULL });
        free(ready_infraenv(c, ns, "signed", &h));
        ie = kget(c, HUB_KIND_INFRAENV, ns, "signed");
        events = strdup(strempty(str_at(ie, "status.debugInfo.eventsURL")));
        prefix = strdup_printf("%s/api/assisted-install/v2/events?api_key=", public);
        if (!startswith(events, prefix))
                test_fail(__FILE__, __LINE__, "eventsURL %s is not on %s with a key", events, public);
        ASSERT_NOT_CONTAINS(events, token);
        /* it opens, with nothing but its api_key */
        http_response_done(&resp);
        ASSERT_OK(http_request(hc, &(HttpRequest){ .method = "GET", .path = events + strlen(public) }, &resp,
                               &err));
        ASSERT_EQ(resp.status, 200);
        /* and the discovery ignition's URL the Cluster API provider makes of it */
        assert_capoa_gets_discovery_ignition(url, events);
        hub_stop_ok(&h);
        test_server_stop(pid);
}

/* SIGKILL: a crash, nothing released */
static void hub_kill(Hub *h)
{
        if (h->pid <= 0)
                return;
        (void)kill(h->pid, SIGKILL);
        (void)waitpid(h->pid, NULL, 0);
        track_hub(h->pid, false);
        h->pid = 0;
        free(h->log);
        h->log = NULL;
}

static bool has_marker(json_object *o, const void *arg)
{
        (void)arg;
        return o && hub_object_annotation(o, HUB_ANNOTATION_REGISTERING);
}

/* Finding 9a: cradle-hub dies while its register call is in flight (the
 * marker written, no id); the hub started next, the only replica, resumes
 * at once instead of waiting out the 2-minute hold of another holder's
 * marker; with leader election alike once it holds the Lease */
TEST(restarted_hub_resumes_a_registration_at_once)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_free_ char *lease_ns = NULL;
        const char *ns;

        need_refservice("fault injection");
        ns = kube_test_namespace("hub-resume");
        lease_ns = strdup(ns);
        create_pull_secret(c, ns, true);
        for (int leader = 0; leader < 2; leader++) {
                char *const elect[] = { (char *)"--leader-elect", (char *)"--leader-election-namespace",
                                        lease_ns, NULL };
                _cleanup_free_ char *name = strdup_printf("resumed-%s-%.8s", leader ? "leader" : "single",
                                                          ns + strlen(ns) - 8),
                                    *id = NULL;
                usec_t t0;
                Hub a, b;

                /* the register call hangs 10 s, then its connection drops:
                 * the service registers nothing */
                ASSERT_EQ(control("POST", "/faults",
                                  "{\"method\":\"POST\",\"path\":\"/v2/infra-envs$\",\"action\":\"reset\","
                                  "\"delay\":10,\"count\":1}",
                                  NULL),
                          200);
                create_infraenv(c, ns, name, NULL);
                hub_start(&a, ns, leader ? elect : NULL);
                json_object_put(wait_for(c, HUB_KIND_INFRAENV, ns, name, has_marker, NULL, 60, &a));
                hub_kill(&a);
                ASSERT_EQ(control("DELETE", "/faults", NULL, NULL), 200);
                t0 = now_usec(CLOCK_MONOTONIC);
                hub_start(&b, ns, leader ? elect : NULL);
                /* the hold is 120 s; a killed leader's Lease expires after 15 */
                id = ready_infraenv(c, ns, name, &b);
                ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 < 60 * USEC_PER_SEC);
                ASSERT_TRUE(uuid_is_valid(id));
                hub_stop_ok(&b);
                ASSERT_EQ(service_infraenvs_named(name), 1u);
        }
}

/* Finding 9b: an InfraEnv and a ClusterDeployment copied from another hub
 * (backup and restore, get -o yaml | apply) carry that hub's ids, which
 * this service does not know: both register anew */
TEST(objects_copied_from_another_hub_register_anew)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-copied");
        _cleanup_free_ char *imageset = NULL, *an = aci_name("copied"), *id = NULL, *patch = NULL;
        _cleanup_(json_object_putp) json_object *cd = NULL;
        char foreign_ie[UUID_STRING_MAX], foreign_cluster[UUID_STRING_MAX];
        Hub h;

        uuid_random(foreign_ie);
        uuid_random(foreign_cluster);
        create_pull_secret(c, ns, true);
        imageset = create_image_set(c, ns);
        create_cluster(c, ns, "copied", "pull-secret", imageset);
        create_infraenv(c, ns, "copied", NULL);
        patch = strdup_printf("{\"metadata\":{\"annotations\":{\"%s\":\"%s\",\"%s\":\"sha256:0000\"}}}",
                              HUB_ANNOTATION_INFRAENV_ID, foreign_ie, HUB_ANNOTATION_PULL_SECRET_DIGEST);
        kpatch(c, HUB_KIND_INFRAENV, ns, "copied", false, patch);
        free(patch);
        patch = strdup_printf("{\"metadata\":{\"annotations\":{\"%s\":\"%s\",\"%s\":\"sha256:0000\"}}}",
                              HUB_ANNOTATION_CLUSTER_ID, foreign_cluster, HUB_ANNOTATION_PULL_SECRET_DIGEST);
        kpatch(c, HUB_KIND_CLUSTERDEPLOYMENT, ns, "copied", false, patch);
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "copied", &h);
        ASSERT_TRUE(uuid_is_valid(id));
        ASSERT_FALSE(streq(id, foreign_ie));
        json_object_put(wait_for(c, HUB_KIND_AGENTCLUSTERINSTALL, ns, an, has_condition, &synced, 120, &h));
        cd = kget(c, HUB_KIND_CLUSTERDEPLOYMENT, ns, "copied");
        ASSERT_TRUE(uuid_is_valid(hub_object_annotation(cd, HUB_ANNOTATION_CLUSTER_ID)));
        ASSERT_FALSE(streq(hub_object_annotation(cd, HUB_ANNOTATION_CLUSTER_ID), foreign_cluster));
        hub_stop_ok(&h);
        delete_image_set(c, imageset);
}

/* ---- the Cluster API provider (cradle-hub --capi) ---- */

/* an object of a kind the hub has no HubKind for (a Metal3MachineTemplate) */
static void kcreate_kind(KubeClient *c, const char *api_version, const char *kind, const char *ns,
                         const char *text)
{
        _cleanup_(json_object_putp) json_object *o = kube_test_json(text);
        _cleanup_kube_status_ KubeStatus st = {};
        KubeResource res;

        ASSERT_OK(kube_resolve_kind(c, api_version, kind, &res, NULL));
        if (kube_create(c, &res, ns, o, NULL, &st) < 0)
                test_fail(__FILE__, __LINE__, "cannot create %s: %s\n%s", kind, strna(st.message), text);
}

static bool has_annotations_ids(json_object *o, const void *arg)
{
        (void)arg;
        return !isempty(hub_object_annotation(o, HUB_ANNOTATION_CLUSTER_ID)) &&
               !isempty(hub_object_annotation(o, HUB_ANNOTATION_INFRAENV_ID));
}

static bool exists(json_object *o, const void *arg)
{
        (void)arg;
        return o != NULL;
}

static bool has_data_secret(json_object *o, const void *arg)
{
        (void)arg;
        return json_object_get_boolean(json_get_path(o, "status.initialization.dataSecretCreated")) &&
               str_at(o, "status.dataSecretName");
}

static bool has_host_installation(json_object *o, const void *arg)
{
        (void)arg;
        return hub_conditions_find(o, "HostInstallation") != NULL;
}

/* What CAPI core's Machine controller does with a bootstrap config
 * (bootstrap-config contract): the Machine becomes its controller owner;
 * once it says dataSecretCreated, the Secret's name goes to the Machine. */
static void play_capi_core_machine(KubeClient *c, const char *ns, const char *name, const Hub *h)
{
        _cleanup_(json_object_putp)
                json_object *m = wait_for(c, HUB_KIND_MACHINE, ns, name, exists, NULL, 120, h),
                            *cfg = wait_for(c, HUB_KIND_OAC, ns, name, exists, NULL, 120, h), *ready = NULL;
        _cleanup_free_ char *patch = NULL;

        patch = strdup_printf("{\"metadata\":{\"ownerReferences\":[%s,{\"apiVersion\":\"cluster.x-k8s.io/"
                              "v1beta2\",\"kind\":"
                              "\"Machine\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,"
                              "\"blockOwnerDeletion\":true}]}}",
                              json_object_to_json_string(json_object_array_get_idx(
                                      json_get_path(cfg, "metadata.ownerReferences"), 0)),
                              name, hub_object_uid(m));
        kpatch(c, HUB_KIND_OAC, ns, name, false, patch);
        ready = wait_for(c, HUB_KIND_OAC, ns, name, has_data_secret, NULL, 120, h);
        free(patch);
        patch = strdup_printf("{\"spec\":{\"bootstrap\":{\"dataSecretName\":\"%s\"}}}",
                              str_at(ready, "status.dataSecretName"));
        kpatch(c, HUB_KIND_MACHINE, ns, name, false, patch);
}

/* A control plane of three replicas through cradle-hub --capi, with CAPI
 * core's Machine side played here: the cluster and one infra-env
 * registered, each Machine's data Secret, three hosts registering with
 * the Machines' names bound as masters and a foreign one left unbound.
 * *ret: the control plane's name, cluster id and infra-env id. */
typedef struct CapiRun {
        char *cp_name, *cluster_id, *infra_env_id, *cluster_path;
        char hosts[4][UUID_STRING_MAX];
} CapiRun;

static void capi_run_done(CapiRun *r)
{
        free(r->cp_name);
        free(r->cluster_id);
        free(r->infra_env_id);
        free(r->cluster_path);
}

/* the first half of capi_control_plane_bound(): the objects made, the
 * cluster and its one infra-env registered */
static void capi_control_plane_registered(KubeClient *c, const char *ns, Hub *h, CapiRun *run)
{
        _cleanup_(json_object_putp) json_object *cp = NULL, *cluster = NULL, *infraenvs = NULL;
        const char *cid, *ieid;
        unsigned named_like_cp = 0;

        /* unique on a shared service: the infra-env is named like the control plane */
        run->cp_name = strdup_printf("cp-%s", ns);
        create_pull_secret(c, ns, false);
        kcreate(c, HUB_KIND_CAPI_CLUSTER, ns,
                "{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\",\"kind\":\"Cluster\",\"metadata\":{\"name\":"
                "\"spoke\"},\"spec\":{\"clusterNetwork\":{\"pods\":{\"cidrBlocks\":[\"10.128.0.0/14\"]},"
                "\"services\":{\"cidrBlocks\":[\"172.30.0.0/16\"]}}}}");
        kcreate_kind(
                c, "infrastructure.cluster.x-k8s.io/v1beta1", "Metal3MachineTemplate", ns,
                "{\"apiVersion\":\"infrastructure.cluster.x-k8s.io/"
                "v1beta1\",\"kind\":\"Metal3MachineTemplate\","
                "\"metadata\":{\"name\":\"spoke-controlplane\"},\"spec\":{\"template\":{\"spec\":{\"image\":"
                "{\"url\":\"http://192.0.2.1/rhcos.qcow2\",\"checksum\":\"http://192.0.2.1/rhcos.qcow2."
                "sha256sum\",\"checksumType\":\"sha256\",\"format\":\"qcow2\"}}}}}");
        kcreate(c, HUB_KIND_OACP, ns,
                "{\"apiVersion\":\"controlplane.cluster.x-k8s.io/"
                "v1alpha3\",\"kind\":\"OpenshiftAssistedControlPlane\","
                "\"metadata\":{\"name\":\"%s\",\"labels\":{\"cluster.x-k8s.io/cluster-name\":\"spoke\"}},"
                "\"spec\":{\"distributionVersion\":\"4.13.18\",\"replicas\":3,"
                "\"config\":{\"baseDomain\":\"lab.home\",\"clusterName\":\"spoke\","
                "\"apiVIPs\":[\"198.51.100.40\"],\"ingressVIPs\":[\"198.51.100.41\"],"
                "\"pullSecretRef\":{\"name\":\"pull-secret\"}},"
                "\"openshiftAssistedConfigSpec\":{\"cpuArchitecture\":\"x86_64\"},"
                "\"machineTemplate\":{\"infrastructureRef\":{\"apiGroup\":\"infrastructure.cluster.x-k8s."
                "io\","
                "\"kind\":\"Metal3MachineTemplate\",\"name\":\"spoke-controlplane\"}}}}",
                run->cp_name);
        hub_start(h, ns, (char *[]){ (char *)"--capi", NULL });
        cp = wait_for(c, HUB_KIND_OACP, ns, run->cp_name, has_annotations_ids, NULL, 120, h);
        cid = hub_object_annotation(cp, HUB_ANNOTATION_CLUSTER_ID);
        ieid = hub_object_annotation(cp, HUB_ANNOTATION_INFRAENV_ID);
        run->cluster_id = strdup(cid);
        run->infra_env_id = strdup(ieid);

        /* the service's record: the cluster of CAPOA's fields, one infra-env */
        run->cluster_path = strdup_printf("/v2/clusters/%s", cid);
        ASSERT_EQ(service_call("GET", run->cluster_path, NULL, &cluster), 200);
        ASSERT_STREQ(str_at(cluster, "name"), "spoke");
        ASSERT_STREQ(str_at(cluster, "base_dns_domain"), "lab.home");
        ASSERT_EQ(service_call("GET", "/v2/infra-envs", NULL, &infraenvs), 200);
        for (size_t i = 0; i < hub_json_array_length(infraenvs); i++)
                if (streq_ptr(str_at(json_object_array_get_idx(infraenvs, i), "name"), run->cp_name))
                        named_like_cp++;
        ASSERT_EQ(named_like_cp, 1u);
}

static void capi_control_plane_bound(KubeClient *c, const char *ns, Hub *h, CapiRun *run)
{
        const char *cid, *ieid;

        capi_control_plane_registered(c, ns, h, run);
        cid = run->cluster_id;
        ieid = run->infra_env_id;

        /* CAPI core's side, then each Machine's data: the infra-env's
         * discovery Ignition with the Machine's hostname */
        for (unsigned i = 0; i < 3; i++) {
                _cleanup_free_ char *name = strdup_printf("%s-%u", run->cp_name, i), *value = NULL,
                                    *format = NULL;
                _cleanup_(json_object_putp) json_object *secret = NULL, *data = NULL, *m = NULL;
                bool hostname = false;

                play_capi_core_machine(c, ns, name, h);
                secret = kget(c, HUB_KIND_SECRET, ns, name);
                ASSERT_NOT_NULL(secret);
                ASSERT_STREQ(str_at(secret, "type"), "cluster.x-k8s.io/secret");
                ASSERT_STREQ(hub_object_label(secret, "cluster.x-k8s.io/cluster-name"), "spoke");
                value = hub_secret_value(secret, "value");
                format = hub_secret_value(secret, "format");
                ASSERT_STREQ(format, "ignition");
                data = kube_test_json(value);
                for (size_t k = 0; k < hub_json_array_length(json_get_path(data, "storage.files")); k++)
                        hostname |= streq_ptr(
                                str_at(json_object_array_get_idx(json_get_path(data, "storage.files"), k),
                                       "path"),
                                "/etc/hostname");
                ASSERT_TRUE(hostname);
                m = kget(c, HUB_KIND_MACHINE, ns, name);
                ASSERT_STREQ(str_at(m, "spec.bootstrap.dataSecretName"), name);
        }

        /* hosts registering with the Machines' names are bound to the
         * cluster as masters; a host of no Machine is never bound */
        for (unsigned i = 0; i < 4; i++) {
                _cleanup_free_ char *name = i < 3 ? strdup_printf("%s-%u", run->cp_name, i)
                                                  : strdup("intruder"),
                                    *mac = strdup_printf("02:00:00:00:0c:%02x", i + 1),
                                    *ip = strdup_printf("198.51.100.%u", 70 + i);

                uuid_random(run->hosts[i]);
                register_host(ieid, run->hosts[i], mac, ip, name);
        }
        for (unsigned i = 0; i < 3; i++) {
                _cleanup_free_ char *name = strdup_printf("%s-%u", run->cp_name, i);
                _cleanup_(json_object_putp) json_object *m =
                        wait_for(c, HUB_KIND_MACHINE, ns, name, has_host_installation, NULL, 120, h);
        }
        for (unsigned i = 0; i < 4; i++) {
                _cleanup_free_ char *path = strdup_printf("/v2/infra-envs/%s/hosts/%s", ieid, run->hosts[i]);
                _cleanup_(json_object_putp) json_object *host = NULL;

                /* bound as master with the sentinel's override (a round after the role) */
                for (int tries = 0; tries < 600; tries++) {
                        json_object_put(TAKE_PTR(host));
                        ASSERT_EQ(service_call("GET", path, NULL, &host), 200);
                        if (i == 3 || capi_host_has_sentinel(host))
                                break;
                        usleep(100 * 1000);
                }
                if (i < 3) {
                        ASSERT_STREQ(str_at(host, "cluster_id"), cid);
                        ASSERT_STREQ(str_at(host, "role"), "master");
                        ASSERT_TRUE(capi_host_has_sentinel(host));
                } else {
                        ASSERT_TRUE(isempty(str_at(host, "cluster_id")));
                        ASSERT_FALSE(capi_host_has_sentinel(host));
                }
        }
}

/* the last request the test kube-apiserver logged */
static int64_t kube_request_mark(void)
{
        _cleanup_(json_object_putp) json_object *log = NULL;
        json_object *items;
        int64_t seq = 0;

        ASSERT_EQ(kube_test_ctl("GET", "/requests", NULL, &log), 200);
        items = json_get(log, "requests");
        if (hub_json_array_length(items) > 0)
                (void)json_get_int64(json_object_array_get_idx(items, hub_json_array_length(items) - 1),
                                     "seq", &seq);
        return seq;
}

/* cradle-hub's requests in ns logged after since: verb on resource (lists:
 * their first pages) */
static unsigned hub_requests_since(int64_t since, const char *ns, const char *verb, const char *resource)
{
        _cleanup_free_ char *q = strdup_printf("/requests?since=%" PRIi64, since);
        _cleanup_(json_object_putp) json_object *log = NULL;
        json_object *items;
        unsigned n = 0;

        ASSERT_EQ(kube_test_ctl("GET", q, NULL, &log), 200);
        items = json_get(log, "requests");
        for (size_t i = 0; i < hub_json_array_length(items); i++) {
                json_object *e = json_object_array_get_idx(items, i);

                if (startswith(strempty(json_get_string(e, "userAgent")), "cradle-hub/") &&
                    streq_ptr(json_get_string(e, "verb"), verb) &&
                    streq_ptr(json_get_string(e, "resource"), resource) &&
                    streq_ptr(json_get_string(e, "namespace"), ns) &&
                    !json_get(json_get(e, "query"), "continue"))
                        n++;
        }
        return n;
}

/* the reconciles of a controller so far, whatever their result */
static double reconciles(const Hub *h, const char *controller)
{
        static const char *const results[] = { "success", "requeue_after", "requeue", "error" };
        double n = 0;

        for (size_t i = 0; i < ELEMENTSOF(results); i++) {
                _cleanup_free_ char *series =
                        strdup_printf("controller_runtime_reconcile_total{controller=\"%s\",result=\"%s\"}",
                                      controller, results[i]);

                n += metric(h, series);
        }
        return n;
}

static void wait_reconciles(const Hub *h, const char *controller, double at_least)
{
        for (int i = 0; i < 1200 && reconciles(h, controller) < at_least; i++)
                usleep(100 * 1000);
        ASSERT_TRUE(reconciles(h, controller) >= at_least);
}

TEST(capi_control_plane_registers_binds_and_serves_bootstrap_data)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-capi");
        _cleanup_(capi_run_done) CapiRun run = {};
        _cleanup_(json_object_putp) json_object *ps = NULL;
        double passes;
        int64_t mark;
        Hub h;

        capi_control_plane_bound(c, ns, &h, &run);
        hub_stop_ok(&h);
        /* the pull secret (made without) has the watch labels */
        ps = kget(c, HUB_KIND_SECRET, ns, "pull-secret");
        ASSERT_STREQ(hub_object_label(ps, HUB_LABEL_WATCH), "true");
        if (kube_test_real())
                return;

        /* A restarted cradle-hub's full pass over the bound control plane
         * and its three configs, then a MachineDeployment of the cluster
         * made (its event wakes the control plane): every Secret (the
         * pull secret, the data Secrets) read from the cache, not one GET;
         * the MachineDeployments listed once, by their informer, not per
         * reconcile; no infrastructure template read (no Machine to make).
         * Of the service, the cluster alone: every Machine's host is bound
         * to it, so the infra-env's host list is not read */
        mark = kube_request_mark();
        hub_start(&h, ns, (char *[]){ (char *)"--capi", NULL });
        wait_reconciles(&h, "capi-bootstrap", 3);
        wait_reconciles(&h, "capi-controlplane", 1);
        passes = reconciles(&h, "capi-controlplane");
        kcreate(c, HUB_KIND_MACHINEDEPLOYMENT, ns,
                "{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\",\"kind\":\"MachineDeployment\","
                "\"metadata\":{\"name\":\"spoke-workers\"},\"spec\":{\"clusterName\":\"spoke\",\"replicas\":"
                "0,"
                "\"selector\":{\"matchLabels\":{\"cluster.x-k8s.io/deployment-name\":\"spoke-workers\"}},"
                "\"template\":{\"metadata\":{\"labels\":{\"cluster.x-k8s.io/"
                "deployment-name\":\"spoke-workers\"}},"
                "\"spec\":{\"clusterName\":\"spoke\",\"bootstrap\":{\"configRef\":{\"apiGroup\":"
                "\"bootstrap.cluster.x-k8s.io\",\"kind\":\"OpenshiftAssistedConfigTemplate\",\"name\":"
                "\"spoke-workers\"}},\"infrastructureRef\":{\"apiGroup\":\"infrastructure.cluster.x-k8s."
                "io\","
                "\"kind\":\"Metal3MachineTemplate\",\"name\":\"spoke-workers\"}}}}}");
        wait_reconciles(&h, "capi-controlplane", passes + 1);
        ASSERT_TRUE(service_calls(&h, "v2GetCluster", 200) >= 2);
        ASSERT_EQ(service_calls(&h, "v2ListHosts", 200), 0u);
        hub_stop_ok(&h);
        ASSERT_EQ(hub_requests_since(mark, ns, "get", "secrets"), 0u);
        ASSERT_EQ(hub_requests_since(mark, ns, "list", "machinedeployments"), 1u);
        ASSERT_TRUE(hub_requests_since(mark, ns, "watch", "machinedeployments") >= 1);
        ASSERT_EQ(hub_requests_since(mark, ns, "get", "metal3machinetemplates"), 0u);
        ASSERT_EQ(hub_requests_since(mark, ns, "get", "metal3machines"), 0u);
}

static bool has_finalizer(json_object *o, const void *finalizer)
{
        return o && hub_object_has_finalizer(o, finalizer);
}

/* the service's host of infra_env_id, waited for until bound to
 * cluster_id with the sentinel's override (cradle-hub's last call of the
 * binding), or unbound ("") */
static void wait_host_cluster(const char *infra_env_id, const char *host_id, const char *cluster_id,
                              const Hub *h)
{
        _cleanup_free_ char *path = strdup_printf("/v2/infra-envs/%s/hosts/%s", infra_env_id, host_id);

        for (unsigned i = 0; i < 1200; i++) {
                _cleanup_(json_object_putp) json_object *host = NULL;

                ASSERT_EQ(service_call("GET", path, NULL, &host), 200);
                if (streq(strempty(str_at(host, "cluster_id")), cluster_id) &&
                    (isempty(cluster_id) || capi_host_has_sentinel(host)))
                        return;
                usleep(100 * 1000);
        }
        {
                _cleanup_free_ char *log = hub_log(h);
                size_t n = log ? strlen(log) : 0;

                test_fail(__FILE__, __LINE__, "host %s never bound to '%s'\n--- hub log (tail):\n%s",
                          host_id, cluster_id, log ? log + (n > 6000 ? n - 6000 : 0) : "");
        }
}

static void kdelete(KubeClient *c, HubKind k, const char *ns, const char *name)
{
        _cleanup_kube_status_ KubeStatus st = {};

        if (kube_delete(c, &hub_kind_info(k)->resource, ns, name, NULL, NULL, &st) < 0)
                test_fail(__FILE__, __LINE__, "cannot delete %s %s/%s: %s", hub_kind_to_string(k), ns, name,
                          strna(st.message));
}

/* Deletion through CAPOA's finalizers. Two control-plane Machines with
 * their hosts bound, the third without (no installation). The control
 * plane paused (else cradle-hub makes the deleted Machine again), a
 * Machine deleted as CAPI core's Machine controller deletes one (its
 * bootstrap config, then itself): its host is unbound in the service and
 * the config's finalizer goes. Then the control plane deleted, still
 * paused: it stays; unpaused, the service's cluster and infra-env (with
 * its hosts) are deregistered and the object goes. */
TEST(capi_deletion_unbinds_hosts_then_deregisters_the_cluster)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-capi-delete");
        _cleanup_(capi_run_done) CapiRun run = {};
        _cleanup_(json_object_putp) json_object *cp = NULL, *kept = NULL;
        _cleanup_free_ char *path = NULL, *m0 = NULL, *m1 = NULL;
        Hub h;

        capi_control_plane_registered(c, ns, &h, &run);
        m0 = strdup_printf("%s-0", run.cp_name);
        m1 = strdup_printf("%s-1", run.cp_name);
        for (unsigned i = 0; i < 3; i++) {
                _cleanup_free_ char *name = strdup_printf("%s-%u", run.cp_name, i);

                play_capi_core_machine(c, ns, name, &h);
        }
        for (unsigned i = 0; i < 2; i++) {
                _cleanup_free_ char *mac = strdup_printf("02:00:00:00:0d:%02x", i + 1),
                                    *ip = strdup_printf("198.51.100.%u", 90 + i);

                uuid_random(run.hosts[i]);
                register_host(run.infra_env_id, run.hosts[i], mac, ip, i == 0 ? m0 : m1);
                wait_host_cluster(run.infra_env_id, run.hosts[i], run.cluster_id, &h);
                /* bound, the agent is told to exit: its restart registers
                 * the host again, out of binding (a binding host is waited
                 * for); after cradle-hub's calls on it (the real service's
                 * registration concurrent with them can end in a deadlock
                 * of its database, 500, which an agent would retry) */
                register_host(run.infra_env_id, run.hosts[i], mac, ip, i == 0 ? m0 : m1);
        }
        json_object_put(wait_for(c, HUB_KIND_OACP, ns, run.cp_name, has_finalizer,
                                 HUB_FINALIZER_CAPI_CONTROL_PLANE, 120, &h));
        json_object_put(
                wait_for(c, HUB_KIND_OAC, ns, m0, has_finalizer, HUB_FINALIZER_CAPI_BOOTSTRAP, 120, &h));

        kpatch(c, HUB_KIND_OACP, ns, run.cp_name, false,
               "{\"metadata\":{\"annotations\":{\"cluster.x-k8s.io/paused\":\"\"}}}");
        json_object_put(wait_for(c, HUB_KIND_OACP, ns, run.cp_name, has_condition,
                                 &(Cond){ "Paused", "True", "Paused", NULL }, 120, &h));
        kdelete(c, HUB_KIND_OAC, ns, m0);
        kdelete(c, HUB_KIND_MACHINE, ns, m0);
        json_object_put(wait_for(c, HUB_KIND_OAC, ns, m0, absent, NULL, 120, &h));
        wait_host_cluster(run.infra_env_id, run.hosts[0], "", &h);
        /* the other Machine's host is left alone */
        wait_host_cluster(run.infra_env_id, run.hosts[1], run.cluster_id, &h);

        /* paused: not finalized (the pause stays in force through the deletion) */
        kdelete(c, HUB_KIND_OACP, ns, run.cp_name);
        usleep(2 * USEC_PER_SEC);
        kept = kget(c, HUB_KIND_OACP, ns, run.cp_name);
        ASSERT_TRUE(has_finalizer(kept, HUB_FINALIZER_CAPI_CONTROL_PLANE));
        ASSERT_EQ(service_call("GET", run.cluster_path, NULL, NULL), 200);
        kpatch(c, HUB_KIND_OACP, ns, run.cp_name, false,
               "{\"metadata\":{\"annotations\":{\"cluster.x-k8s.io/paused\":null}}}");
        cp = wait_for(c, HUB_KIND_OACP, ns, run.cp_name, absent, NULL, 120, &h);
        ASSERT_EQ(service_call("GET", run.cluster_path, NULL, NULL), 404);
        path = strdup_printf("/v2/infra-envs/%s", run.infra_env_id);
        ASSERT_EQ(service_call("GET", path, NULL, NULL), 404);

        /* the other configs, their control plane gone, let go too (the
         * garbage collector may have deleted them through their Machines) */
        for (unsigned i = 1; i < 3; i++) {
                _cleanup_free_ char *name = strdup_printf("%s-%u", run.cp_name, i);

                (void)kube_delete(c, &hub_kind_info(HUB_KIND_OAC)->resource, ns, name, NULL, NULL, NULL);
                json_object_put(wait_for(c, HUB_KIND_OAC, ns, name, absent, NULL, 120, &h));
        }
        hub_stop_ok(&h);
}

/* the POSTs to path the service has recorded */
static size_t recorded_posts(const char *path)
{
        _cleanup_(json_object_putp) json_object *reqs = NULL;
        _cleanup_free_ char *q = strdup_printf("/requests?method=POST&path=%s", path);

        ASSERT_EQ(control("GET", q, NULL, &reqs), 200);
        return hub_json_array_length(reqs);
}

/* Both registrations' answers lost after the service committed them (as
 * a crash or a dropped connection leaves them): each is found again by
 * the claim protocol's search, none made twice */
TEST(capi_lost_registration_answers_register_once)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_(capi_run_done) CapiRun run = {};
        _cleanup_(json_object_putp) json_object *faults = NULL;
        const char *ns;
        size_t clusters, infraenvs;
        Hub h;

        need_refservice("fault injection");
        ns = kube_test_namespace("hub-capi-lost");
        clusters = recorded_posts("/v2/clusters$");
        infraenvs = recorded_posts("/v2/infra-envs$");
        ASSERT_EQ(control("POST", "/faults",
                          "[{\"method\":\"POST\",\"path\":\"/v2/clusters$\",\"action\":\"close\","
                          "\"after\":true,\"count\":1},"
                          "{\"method\":\"POST\",\"path\":\"/v2/infra-envs$\",\"action\":\"close\","
                          "\"after\":true,\"count\":1}]",
                          NULL),
                  200);
        capi_control_plane_registered(c, ns, &h, &run);
        ASSERT_EQ(control("GET", "/faults", NULL, &faults), 200);
        for (size_t i = 0; i < hub_json_array_length(faults); i++)
                ASSERT_EQ(json_object_get_int64(json_get(json_object_array_get_idx(faults, i), "applied")),
                          1);
        ASSERT_EQ(control("DELETE", "/faults", NULL, NULL), 200);
        ASSERT_EQ(recorded_posts("/v2/clusters$") - clusters, 1u);
        ASSERT_EQ(recorded_posts("/v2/infra-envs$") - infraenvs, 1u);
        hub_stop_ok(&h);
}

/* the <cluster>-kubeconfig Secret's client certificate, as the Secret
 * holds it: its validity, subject, the CSR that issued it */
typedef struct SecretCert {
        usec_t not_before, not_after;
        char *common_name, *csr, *kubeconfig;
} SecretCert;

static void secret_cert_done(SecretCert *c)
{
        free(c->common_name);
        free(c->csr);
        free(c->kubeconfig);
}

static bool has_minted_cert(json_object *o, const void *arg)
{
        const char *csr = hub_object_annotation(o, "cradle.agent-install.openshift.io/kubeconfig-csr");

        /* arg: a CSR name the certificate must no longer come from, or NULL */
        return !isempty(csr) && !streq_ptr(csr, arg);
}

static void secret_cert(json_object *secret, SecretCert *ret)
{
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;

        *ret = (SecretCert){ .kubeconfig = hub_secret_value(secret, "value"),
                             .csr = strdup(strempty(hub_object_annotation(
                                     secret, "cradle.agent-install.openshift.io/kubeconfig-csr"))) };
        ASSERT_NOT_NULL(ret->kubeconfig);
        ASSERT_OK(kube_config_parse(ret->kubeconfig, strlen(ret->kubeconfig), NULL, NULL, &cfg, NULL));
        ASSERT_NOT_NULL(cfg->client_cert_pem);
        ASSERT_NOT_NULL(cfg->client_key_pem);
        ASSERT_OK(kube_cert_validity(cfg->client_cert_pem, &ret->not_before, &ret->not_after,
                                     &ret->common_name));
}

/* The Secret's kubeconfig works: its user reads the cluster (the
 * ClusterRoleBinding made for it, on a cluster with RBAC). */
static void kubeconfig_works(const char *text)
{
        _cleanup_(kube_config_freep) KubeConfig *cfg = NULL;
        _cleanup_(kube_client_freep) KubeClient *k = NULL;
        _cleanup_(json_object_putp) json_object *l = NULL;
        _cleanup_kube_status_ KubeStatus st = {};

        ASSERT_OK(kube_config_parse(text, strlen(text), NULL, NULL, &cfg, NULL));
        ASSERT_OK(kube_client_new(cfg, NULL, &k, NULL));
        ASSERT_OK(kube_request(k, "GET", "/readyz", NULL, NULL, NULL, NULL));
        if (kube_list(k, &KUBE_RESOURCE("", "v1", "namespaces", "Namespace", false), NULL,
                      &(KubeListOptions){ .limit = 1 }, &l, &st) < 0)
                test_fail(__FILE__, __LINE__, "the minted kubeconfig cannot list namespaces: %s",
                          strna(st.message));
}

/* Once the new cluster's API answers, the kubeconfig Secret's client
 * certificate is one the cluster's kube-apiserver-client signer issued
 * for the expiration asked (600 s here, the API's least), and it is
 * renewed before its end (--kubeconfig-cert-renew-before 590s: 10 s
 * after its start, instead of at half-life). The new cluster is the test
 * kube-apiserver itself, its kubeconfig given to the reference service as
 * the installer's output (its control API). */
/* A bound control plane whose installation is done, the new cluster
 * being the test kube-apiserver itself: its kubeconfig given to the
 * reference service as the installer's output (its control API); then
 * cradle-hub --capi again with extra. *ret_admin: that kubeconfig. */
static void capi_installed_on_test_cluster(KubeClient *c, const char *ns, Hub *h, CapiRun *run,
                                           char *const *extra, char **ret_admin)
{
        _cleanup_free_ char *admin = NULL, *path = NULL;
        _cleanup_strv_free_ char **argv = NULL;

        need_refservice("its control API plays the installer's kubeconfig");
        capi_control_plane_bound(c, ns, h, run);
        hub_stop_ok(h);
        ASSERT_OK(read_full_file(kube_test_kubeconfig(), 1024 * 1024, &admin, NULL));
        path = strdup_printf("/clusters/%s/files/kubeconfig", run->cluster_id);
        ASSERT_EQ(control("PUT", path, admin, NULL), 200);
        free(path);
        path = strdup_printf("/clusters/%s", run->cluster_id);
        ASSERT_EQ(control("POST", path, "{\"status\":\"installed\"}", NULL), 200);
        ASSERT_OK(strv_extend(&argv, "--capi"));
        STRV_FOREACH (e, extra)
                ASSERT_OK(strv_extend(&argv, *e));
        hub_start(h, ns, argv);
        *ret_admin = TAKE_PTR(admin);
}

/* Once the new cluster's API answers, the kubeconfig Secret's client
 * certificate is one the cluster's kube-apiserver-client signer issued
 * for the expiration asked (600 s here, the API's least), and it is
 * renewed before its end (--kubeconfig-cert-renew-before 590s: 10 s
 * after its start, instead of at half-life). */
TEST(capi_kubeconfig_certificate_short_lived_and_renewed)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns = kube_test_namespace("hub-capi-cert");
        _cleanup_(capi_run_done) CapiRun run = {};
        _cleanup_(json_object_putp) json_object *first = NULL, *second = NULL, *csr = NULL;
        _cleanup_(secret_cert_done) SecretCert a = {}, b = {};
        _cleanup_free_ char *admin = NULL, *log = NULL, *admin_key = NULL;
        _cleanup_(kube_config_freep) KubeConfig *admin_cfg = NULL;
        usec_t now;
        json_object *cond;
        Hub h;

        capi_installed_on_test_cluster(c, ns, &h, &run,
                                       (char *[]){ (char *)"--kubeconfig-cert-expiration", (char *)"10m",
                                                   (char *)"--kubeconfig-cert-renew-before", (char *)"590s",
                                                   NULL },
                                       &admin);
        ASSERT_OK(kube_config_parse(admin, strlen(admin), NULL, NULL, &admin_cfg, NULL));
        first = wait_for(c, HUB_KIND_SECRET, ns, "spoke-kubeconfig", has_minted_cert, NULL, 120, &h);
        now = now_usec(CLOCK_REALTIME);
        secret_cert(first, &a);
        ASSERT_STREQ(a.common_name, "cradle-hub:cluster-api");
        /* kube-controller-manager's signer: from 5 min back, the 600 s from now */
        ASSERT_TRUE(a.not_after > now + 540 * USEC_PER_SEC && a.not_after <= now + 600 * USEC_PER_SEC);
        ASSERT_TRUE(a.not_before < now);
        ASSERT_STREQ(str_at(first, "type"), "cluster.x-k8s.io/secret");
        ASSERT_STREQ(hub_object_label(first, "cluster.x-k8s.io/cluster-name"), "spoke");
        kubeconfig_works(a.kubeconfig);
        /* the CSR on the new cluster: the signer, the expiration, approved by the hub */
        ASSERT_OK(kube_get(c,
                           &KUBE_RESOURCE("certificates.k8s.io", "v1", "certificatesigningrequests",
                                          "CertificateSigningRequest", false),
                           NULL, a.csr, &csr, NULL));
        ASSERT_STREQ(str_at(csr, "spec.signerName"), "kubernetes.io/kube-apiserver-client");
        ASSERT_EQ(json_object_get_int64(json_get_path(csr, "spec.expirationSeconds")), 600);
        cond = json_object_array_get_idx(json_get_path(csr, "status.conditions"), 0);
        ASSERT_STREQ(str_at(cond, "type"), "Approved");
        ASSERT_STREQ(str_at(cond, "reason"), "CradleHubApproved");

        /* renewed: another CSR's certificate, for as long from its own start */
        second = wait_for(c, HUB_KIND_SECRET, ns, "spoke-kubeconfig", has_minted_cert, a.csr, 120, &h);
        secret_cert(second, &b);
        ASSERT_STREQ(b.common_name, "cradle-hub:cluster-api");
        ASSERT_TRUE(b.not_after > a.not_after);
        ASSERT_FALSE(streq(b.kubeconfig, a.kubeconfig));
        kubeconfig_works(b.kubeconfig);

        /* neither the admin's key nor a minted one in the hub's log */
        log = hub_log(&h);
        hub_stop_ok(&h);
        ASSERT_NOT_NULL(log);
        if (admin_cfg->client_key_pem && strchr(admin_cfg->client_key_pem, '\n')) {
                admin_key = strndup(strchr(admin_cfg->client_key_pem, '\n') + 1, 40);
                ASSERT_NULL(strstr(log, admin_key));
        }
        ASSERT_NULL(strstr(log, "client-key-data"));
        ASSERT_NULL(strstr(log, "PRIVATE KEY"));
}

/* The new cluster's signer does not sign (the test kube-apiserver's
 * CSR signer off): the Secret keeps the admin's kubeconfig, the control
 * plane says why, and the certificate comes once the signer signs
 * again. Needs the test server's control API. */
TEST(capi_kubeconfig_certificate_not_signed_keeps_the_secret)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        const char *ns;
        _cleanup_(capi_run_done) CapiRun run = {};
        _cleanup_(json_object_putp) json_object *cp = NULL, *secret = NULL, *minted = NULL;
        _cleanup_free_ char *admin = NULL, *value = NULL;
        const Cond not_issued = { "KubeconfigAvailable", "True", "ClientCertificateNotIssued",
                                  "cannot get a client certificate from the cluster's CSR API: the "
                                  "CertificateSigningRequest 'cradle-hub-kubeconfig-*" };
        Hub h;

        kube_test_need_server("its CSR signer switched off");
        ns = kube_test_namespace("hub-capi-nocert");
        ASSERT_EQ(kube_test_ctl("POST", "/csr-signing", "{\"enabled\":false}", NULL), 200);
        capi_installed_on_test_cluster(c, ns, &h, &run, (char *[]){ NULL }, &admin);
        cp = wait_for(c, HUB_KIND_OACP, ns, run.cp_name, has_condition, &not_issued, 120, &h);
        ASSERT_NOT_NULL(strstr(json_object_to_json_string(cp), "was approved but not signed within 10 s"));
        secret = kget(c, HUB_KIND_SECRET, ns, "spoke-kubeconfig");
        ASSERT_NOT_NULL(secret);
        value = hub_secret_value(secret, "value");
        ASSERT_STREQ(value, admin);
        ASSERT_NULL(hub_object_annotation(secret, "cradle.agent-install.openshift.io/kubeconfig-csr"));
        ASSERT_EQ(kube_test_ctl("POST", "/csr-signing", "{\"enabled\":true}", NULL), 200);
        minted = wait_for(c, HUB_KIND_SECRET, ns, "spoke-kubeconfig", has_minted_cert, NULL, 120, &h);
        json_object_put(TAKE_PTR(cp));
        cp = wait_for(c, HUB_KIND_OACP, ns, run.cp_name, has_condition,
                      &(Cond){ "KubeconfigAvailable", "True", "KubeconfigAvailable", NULL }, 60, &h);
        hub_stop_ok(&h);
}

static int resolve_machine_deployments(void)
{
        _cleanup_(kube_client_freep) KubeClient *fresh = kube_test_client();
        KubeResource res;

        return kube_resolve_kind(fresh, HUB_GROUP_CAPI "/" HUB_CAPI_VERSION, "MachineDeployment", &res,
                                 NULL);
}

/* A management cluster that does not serve MachineDeployments (their CRD
 * deleted for the case, applied again after it): cradle-hub --capi still
 * starts and registers the control plane's cluster (no workers to wait
 * for); a cluster without Machines would not do (the kind is required). */
TEST(capi_runs_without_machine_deployments_served)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_free_ char *crd = NULL, *body = NULL;
        _cleanup_(capi_run_done) CapiRun run = {};
        _cleanup_kube_status_ KubeStatus st = {};
        const char *ns;
        Hub h;

        kube_test_need_server("a CRD deleted and applied again");
        ns = kube_test_namespace("hub-capi-nomd");
        if (kube_delete(c, &kube_resource_crds, NULL, "machinedeployments.cluster.x-k8s.io", NULL, NULL,
                        &st) < 0)
                test_fail(__FILE__, __LINE__, "cannot delete the MachineDeployment CRD: %s",
                          strna(st.message));
        for (int i = 0; i < 600 && resolve_machine_deployments() != -ENOENT; i++)
                usleep(100 * 1000);
        ASSERT_EQ(resolve_machine_deployments(), -ENOENT);

        capi_control_plane_registered(c, ns, &h, &run);
        hub_stop_ok(&h);

        crd = strdup_printf("%s/tests/reference/cluster-api/core/config/crd/bases/"
                            "cluster.x-k8s.io_machinedeployments.yaml",
                            test_srcdir());
        body = strdup_printf("{\"paths\":[\"%s\"]}", crd);
        ASSERT_EQ(kube_test_ctl("POST", "/apply", body, NULL), 200);
        kube_test_settle();
        ASSERT_OK(resolve_machine_deployments());
}

/* --watch-filter shards the Cluster API kinds: without --capi it is
 * refused before anything is watched */
TEST(watch_filter_needs_capi)
{
        _cleanup_free_ char *cmd = strdup_printf("'%s/hub/cradle-hub' --service-url http://127.0.0.1:9 "
                                                 "--kubeconfig /nonexistent --watch-filter shard-a 2>&1",
                                                 test_builddir()),
                            *out = NULL;

        ASSERT_NOT_NULL(cmd);
        ASSERT_EQ(test_run((char *[]){ (char *)"/bin/sh", (char *)"-c", cmd, NULL }, &out), 1);
        ASSERT_NOT_NULL(strstr(out, "--watch-filter filters the Cluster API kinds: give --capi too"));
}

TEST(zz_rbac_grants_every_request)
{
        _cleanup_(kube_client_freep) KubeClient *c = (setup(), kube_test_client());
        _cleanup_(json_object_putp) json_object *docs = NULL, *log = NULL;
        _cleanup_free_ char *yaml = test_src_path("packaging/hub/rbac.yaml"), *out = NULL, *id = NULL,
                            *lease_ns = NULL;
        _cleanup_strv_free_ char **missing = NULL;
        const char *ns;
        char host[UUID_STRING_MAX];
        unsigned checked = 0;
        json_object *items;
        Hub h;

        kube_test_need_server("its request log");
        ns = kube_test_namespace("hub-rbac");
        /* a scenario that makes every kind of request: an unlabelled pull
         * secret, an InfraEnv, a host, its BMH with a malformed annotation
         * (an Event), a PreprovisioningImage, the BMH deleted with its Agent,
         * leader election */
        uuid_random(host);
        create_pull_secret(c, ns, false);
        create_infraenv(c, ns, "rbac", NULL);
        kcreate(c, HUB_KIND_BMH, ns,
                "{\"apiVersion\":\"metal3.io/"
                "v1alpha1\",\"kind\":\"BareMetalHost\",\"metadata\":{\"name\":\"w0\","
                "\"labels\":{\"infraenvs.agent-install.openshift.io\":\"rbac\"},\"annotations\":{"
                "\"bmac.agent-install.openshift.io/installer-args\":\"not json\","
                "\"bmac.agent-install.openshift.io/remove-agent-and-node-on-delete\":\"true\"}},"
                "\"spec\":{\"online\":false,\"bootMACAddress\":\"02:00:00:00:09:01\"}}");
        kpatch(c, HUB_KIND_BMH, ns, "w0", true,
               "{\"status\":{\"operationalStatus\":\"OK\",\"poweredOn\":false,\"errorCount\":0,"
               "\"errorMessage\":\"\","
               "\"hardwareProfile\":\"\",\"provisioning\":{\"ID\":\"x\",\"state\":\"ready\"}}}");
        kcreate(c, HUB_KIND_PPI, ns,
                "{\"apiVersion\":\"metal3.io/"
                "v1alpha1\",\"kind\":\"PreprovisioningImage\",\"metadata\":{\"name\":\"w0\","
                "\"labels\":{\"infraenvs.agent-install.openshift.io\":\"rbac\"}},\"spec\":{"
                "\"acceptFormats\":[\"iso\"]}}");
        lease_ns = strdup(ns);
        hub_start(&h, ns,
                  (char *[]){ (char *)"--leader-elect", (char *)"--leader-election-namespace", lease_ns,
                              NULL });
        id = ready_infraenv(c, ns, "rbac", &h);
        register_host(id, host, "02:00:00:00:09:01", "198.51.100.99", "rbac-0");
        /* BMAC approves it (and names the malformed annotation in an Event) */
        json_object_put(wait_for(c, HUB_KIND_AGENT, ns, host, agent_approved, NULL, 120, &h));
        ASSERT_OK(kube_delete(c, &hub_kind_info(HUB_KIND_BMH)->resource, ns, "w0", NULL, NULL, NULL));
        json_object_put(wait_for(c, HUB_KIND_AGENT, ns, host, absent, NULL, 120, &h));
        hub_stop_ok(&h);

        ASSERT_EQ(test_run((char *[]){ (char *)"/usr/bin/python3", (char *)"-c",
                                       (char *)"import json, sys, yaml; "
                                               "print(json.dumps([d for d in "
                                               "yaml.safe_load_all(open(sys.argv[1])) if d]))",
                                       yaml, NULL },
                           &out),
                  0);
        docs = kube_test_json(out);
        ASSERT_EQ(kube_test_ctl("GET", "/requests", NULL, &log), 200);
        items = json_get(log, "requests");
        for (size_t i = 0; i < hub_json_array_length(items); i++) {
                json_object *e = json_object_array_get_idx(items, i);
                const char *ua = json_get_string(e, "userAgent"), *res = json_get_string(e, "resource"),
                           *sub = json_get_string(e, "subresource"), *verb = json_get_string(e, "verb"),
                           *group = strempty(json_get_string(e, "group"));
                _cleanup_free_ char *full = NULL;
                bool granted = false;

                if (!startswith(strempty(ua), "cradle-hub/") || isempty(res))
                        continue; /* not the hub, or discovery (granted to everyone) */
                /* the Cluster API kinds (cradle-hub --capi, the capi_ cases):
                 * granted by the provider's components, not by the hub's
                 * Deployment's rbac.yaml */
                if (streq(group, "cluster.x-k8s.io") || endswith(group, ".cluster.x-k8s.io"))
                        continue;
                full = isempty(sub) ? strdup(res) : strdup_printf("%s/%s", res, sub);
                for (size_t d = 0; d < hub_json_array_length(docs) && !granted; d++) {
                        json_object *rules = json_get(json_object_array_get_idx(docs, d), "rules");

                        for (size_t k = 0; k < hub_json_array_length(rules) && !granted; k++)
                                granted =
                                        rule_grants(json_object_array_get_idx(rules, k), group, full, verb);
                }
                checked++;
                if (!granted) {
                        _cleanup_free_ char *what = strdup_printf("%s %s/%s", verb, group, full);

                        if (!strv_contains(missing, what))
                                ASSERT_OK(strv_extend(&missing, what));
                }
        }
        ASSERT_GE(checked, 20);
        /* and the other way round, for the log: grants this run did not use */
        for (size_t d = 0; d < hub_json_array_length(docs); d++) {
                json_object *rules = json_get(json_object_array_get_idx(docs, d), "rules");

                for (size_t k = 0; k < hub_json_array_length(rules); k++) {
                        json_object *rule = json_object_array_get_idx(rules, k);
                        json_object *res = json_get(rule, "resources"), *verbs = json_get(rule, "verbs");
                        const char *group = json_object_get_string(
                                json_object_array_get_idx(json_get(rule, "apiGroups"), 0));

                        for (size_t a = 0; a < hub_json_array_length(res); a++)
                                for (size_t b = 0; b < hub_json_array_length(verbs); b++) {
                                        const char *rs = json_object_get_string(
                                                           json_object_array_get_idx(res, a)),
                                                   *vb = json_object_get_string(
                                                           json_object_array_get_idx(verbs, b));
                                        bool used = false;

                                        for (size_t i = 0; i < hub_json_array_length(items) && !used; i++) {
                                                json_object *e = json_object_array_get_idx(items, i);
                                                const char *sub = json_get_string(e, "subresource");
                                                _cleanup_free_ char *full =
                                                        isempty(sub)
                                                                ? strdup(strempty(
                                                                          json_get_string(e, "resource")))
                                                                : strdup_printf(
                                                                          "%s/%s",
                                                                          json_get_string(e, "resource"),
                                                                          sub);

                                                used = startswith(strempty(json_get_string(e, "userAgent")),
                                                                  "cradle-hub/") &&
                                                       streq_ptr(json_get_string(e, "verb"), vb) &&
                                                       streq_ptr(full, rs) &&
                                                       streq(strempty(json_get_string(e, "group")),
                                                             strempty(group));
                                        }
                                        if (!used)
                                                fprintf(stderr,
                                                        "rbac: granted, not used in this run: %s %s/%s\n",
                                                        vb, strempty(group), rs);
                                }
                }
        }
        if (missing) {
                _cleanup_free_ char *text = strv_join(missing, ", ");

                test_fail(__FILE__, __LINE__, "packaging/hub/rbac.yaml does not grant: %s", text);
        }
}

/* ---- cradle agents in dry run (inside tests/helpers/in-netns.sh) ---- */

static pid_t start_agent(const char *infra_env_id, const char *host_id, const char *mac, const char *ip,
                         const char *name, const char *log)
{
        pid_t pid = fork();

        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
                const char *cradle = getenv("CRADLE_BINARY");

                if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || !cradle)
                        _exit(127);
                setpgid(0, 0);
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                setenv("CRADLE_LOG_TARGET", "stderr", 1);
                execl(cradle, cradle, "agent", "--url", svc.url, "--infra-env-id", infra_env_id,
                      "--agent-version", AGENT_IMAGE, "--insecure=true", "--interval=1",
                      "--transport-retry-delay=0.05", "--backoff-max-elapsed=3", "--dry-run", "--force-id",
                      host_id, "--force-hostname", name, "--force-mac", mac, "--forced-ipv4", ip,
                      (char *)NULL);
                _exit(127);
        }
        return pid;
}

TEST(dry_run_agents_register)
{
        _cleanup_(kube_client_freep) KubeClient *c = NULL;
        const char *ns;
        _cleanup_free_ char *id = NULL, *log = NULL;
        char h1[UUID_STRING_MAX], h2[UUID_STRING_MAX];
        pid_t a1, a2;
        Hub h;

        if (isempty(getenv("CRADLE_TEST_NETNS")))
                test_skip(
                        "runs cradle agents: only inside the network namespace of tests/helpers/in-netns.sh "
                        "(the meson test hub-agents)");
        /* a real cluster and service are reached through in-netns.sh's relay */
        setup();
        c = kube_test_client();
        ns = kube_test_namespace("hub-dryrun");
        uuid_random(h1);
        uuid_random(h2);
        log = strdup_printf("%s/agents.log", test_tmpdir());
        create_pull_secret(c, ns, true);
        create_infraenv(c, ns, "lab", NULL);
        hub_start(&h, ns, NULL);
        id = ready_infraenv(c, ns, "lab", &h);
        a1 = start_agent(id, h1, "02:00:00:00:03:01", "198.51.100.91", "lab-1", log);
        a2 = start_agent(id, h2, "02:00:00:00:03:02", "198.51.100.92", "lab-2", log);
        {
                _cleanup_(json_object_putp) json_object *g1 = wait_for(c, HUB_KIND_AGENT, ns, h1,
                                                                       agent_with_hostname, NULL, 180, &h),
                                                        *g2 = wait_for(c, HUB_KIND_AGENT, ns, h2,
                                                                       agent_with_hostname, NULL, 180, &h);

                ASSERT_STREQ(str_at(g1, "status.inventory.hostname"), "lab-1");
                ASSERT_STREQ(str_at(g2, "status.inventory.hostname"), "lab-2");
                ASSERT_STREQ(hub_object_label(g1, HUB_LABEL_INFRAENV), "lab");
        }
        (void)kill(-a1, SIGTERM);
        (void)kill(-a2, SIGTERM);
        (void)waitpid(a1, NULL, 0);
        (void)waitpid(a2, NULL, 0);
        hub_stop_ok(&h);
}

DEFINE_TEST_MAIN
