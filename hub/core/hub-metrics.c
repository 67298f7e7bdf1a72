/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "cleanup.h"
#include "hub-metrics.h"
#include "strutil.h"

static const double buckets[] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60 };
#define N_BUCKETS ELEMENTSOF(buckets)

typedef struct Series {
        char *labels;
        double value; /* counter, gauge; histogram: sum */
        unsigned long count; /* histogram */
        unsigned long bucket[N_BUCKETS];
} Series;

typedef struct Family {
        char *name;
        char *help;
        HubMetricType type;
        Series *series;
        size_t n_series;
} Family;

typedef struct Collector {
        HubMetricsCollectFn fn;
        void *userdata;
} Collector;

struct HubMetrics {
        pthread_mutex_t lock;
        Family *families;
        size_t n_families;
        Collector *collectors;
        size_t n_collectors;
};

int hub_metrics_new(HubMetrics **ret)
{
        HubMetrics *m = calloc(1, sizeof(*m));

        if (!m)
                return -ENOMEM;
        pthread_mutex_init(&m->lock, NULL);
        *ret = m;
        return 0;
}

HubMetrics *hub_metrics_free(HubMetrics *m)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_families; i++) {
                for (size_t j = 0; j < m->families[i].n_series; j++)
                        free(m->families[i].series[j].labels);
                free(m->families[i].series);
                free(m->families[i].name);
                free(m->families[i].help);
        }
        free(m->families);
        free(m->collectors);
        pthread_mutex_destroy(&m->lock);
        free(m);
        return NULL;
}

static Family *family_find(HubMetrics *m, const char *name)
{
        for (size_t i = 0; i < m->n_families; i++)
                if (streq(m->families[i].name, name))
                        return &m->families[i];
        return NULL;
}

int hub_metrics_describe(HubMetrics *m, const char *name, HubMetricType type, const char *help)
{
        Family *f;
        int r = 0;

        pthread_mutex_lock(&m->lock);
        if (family_find(m, name))
                goto out;
        f = realloc(m->families, (m->n_families + 1) * sizeof(*f));
        if (!f) {
                r = -ENOMEM;
                goto out;
        }
        m->families = f;
        f = &m->families[m->n_families];
        *f = (Family){ .type = type, .name = strdup(name), .help = strdup(help) };
        if (!f->name || !f->help) {
                free(f->name);
                free(f->help);
                r = -ENOMEM;
                goto out;
        }
        m->n_families++;
out:
        pthread_mutex_unlock(&m->lock);
        return r;
}

/* lock held; NULL on allocation failure or an undeclared family (a bug:
 * the value is dropped rather than the process failing) */
static Series *series_get(HubMetrics *m, const char *name, const char *labels)
{
        Family *f = family_find(m, name);
        Series *s;

        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_series; i++)
                if (streq(f->series[i].labels, strempty(labels)))
                        return &f->series[i];
        s = realloc(f->series, (f->n_series + 1) * sizeof(*s));
        if (!s)
                return NULL;
        f->series = s;
        s = &f->series[f->n_series];
        *s = (Series){ .labels = strdup(strempty(labels)) };
        if (!s->labels)
                return NULL;
        f->n_series++;
        return s;
}

void hub_metrics_add(HubMetrics *m, const char *name, const char *labels, double v)
{
        Series *s;

        if (!m)
                return;
        pthread_mutex_lock(&m->lock);
        s = series_get(m, name, labels);
        if (s)
                s->value += v;
        pthread_mutex_unlock(&m->lock);
}

void hub_metrics_set(HubMetrics *m, const char *name, const char *labels, double v)
{
        Series *s;

        if (!m)
                return;
        pthread_mutex_lock(&m->lock);
        s = series_get(m, name, labels);
        if (s)
                s->value = v;
        pthread_mutex_unlock(&m->lock);
}

void hub_metrics_observe(HubMetrics *m, const char *name, const char *labels, double v)
{
        Series *s;

        if (!m)
                return;
        pthread_mutex_lock(&m->lock);
        s = series_get(m, name, labels);
        if (s) {
                s->value += v;
                s->count++;
                for (size_t i = 0; i < N_BUCKETS; i++)
                        if (v <= buckets[i])
                                s->bucket[i]++;
        }
        pthread_mutex_unlock(&m->lock);
}

int hub_metrics_add_collector(HubMetrics *m, HubMetricsCollectFn fn, void *userdata)
{
        Collector *c;

        pthread_mutex_lock(&m->lock);
        c = realloc(m->collectors, (m->n_collectors + 1) * sizeof(*c));
        if (c) {
                m->collectors = c;
                m->collectors[m->n_collectors++] = (Collector){ fn, userdata };
        }
        pthread_mutex_unlock(&m->lock);
        return c ? 0 : -ENOMEM;
}

static int append_value(Buf *b, double v)
{
        if (isinf(v))
                return buf_append_str(b, v > 0 ? "+Inf" : "-Inf");
        if (isnan(v))
                return buf_append_str(b, "NaN");
        if (v == floor(v) && fabs(v) < 1e15)
                return buf_appendf(b, "%.0f", v);
        return buf_appendf(b, "%.9g", v);
}

static int series_line(Buf *b, const char *name, const char *suffix, const char *labels, const char *extra,
                       double v)
{
        bool any = !isempty(labels) || !isempty(extra);
        int r;

        r = buf_appendf(b, "%s%s", name, suffix);
        if (r >= 0 && any)
                r = buf_appendf(b, "{%s%s%s}", strempty(labels),
                                !isempty(labels) && !isempty(extra) ? "," : "", strempty(extra));
        if (r >= 0)
                r = buf_append_char(b, ' ');
        if (r >= 0)
                r = append_value(b, v);
        if (r >= 0)
                r = buf_append_char(b, '\n');
        return r;
}

int hub_metrics_render(HubMetrics *m, char **ret)
{
        _cleanup_buf_ Buf b = BUF_INIT(BUF_MAX_JSON_DOC);
        static const char *const type_names[] = { "counter", "gauge", "histogram" };
        size_t n_collectors;
        int r = 0;

        pthread_mutex_lock(&m->lock);
        n_collectors = m->n_collectors;
        pthread_mutex_unlock(&m->lock);
        for (size_t i = 0; i < n_collectors; i++)
                m->collectors[i].fn(m, m->collectors[i].userdata);

        pthread_mutex_lock(&m->lock);
        for (size_t i = 0; r >= 0 && i < m->n_families; i++) {
                Family *f = &m->families[i];

                r = buf_appendf(&b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name,
                                type_names[f->type]);
                for (size_t j = 0; r >= 0 && j < f->n_series; j++) {
                        Series *s = &f->series[j];

                        if (f->type != HUB_METRIC_HISTOGRAM) {
                                r = series_line(&b, f->name, "", s->labels, NULL, s->value);
                                continue;
                        }
                        for (size_t k = 0; r >= 0 && k < N_BUCKETS; k++) {
                                char le[32];

                                snprintf(le, sizeof(le), "le=\"%g\"", buckets[k]);
                                r = series_line(&b, f->name, "_bucket", s->labels, le, (double)s->bucket[k]);
                        }
                        if (r >= 0)
                                r = series_line(&b, f->name, "_bucket", s->labels, "le=\"+Inf\"",
                                                (double)s->count);
                        if (r >= 0)
                                r = series_line(&b, f->name, "_sum", s->labels, NULL, s->value);
                        if (r >= 0)
                                r = series_line(&b, f->name, "_count", s->labels, NULL, (double)s->count);
                }
        }
        pthread_mutex_unlock(&m->lock);
        if (r < 0)
                return r;
        return buf_take(&b, ret, NULL);
}

double hub_metrics_get(HubMetrics *m, const char *name, const char *labels)
{
        double v = 0;
        Family *f;

        pthread_mutex_lock(&m->lock);
        f = family_find(m, name);
        for (size_t i = 0; f && i < f->n_series; i++)
                if (streq(f->series[i].labels, strempty(labels))) {
                        v = f->type == HUB_METRIC_HISTOGRAM ? (double)f->series[i].count
                                                            : f->series[i].value;
                        break;
                }
        pthread_mutex_unlock(&m->lock);
        return v;
}

double hub_metrics_sum(HubMetrics *m, const char *name, const char *filter)
{
        double v = 0;
        Family *f;

        pthread_mutex_lock(&m->lock);
        f = family_find(m, name);
        for (size_t i = 0; f && i < f->n_series; i++)
                if (!filter || strstr(f->series[i].labels, filter))
                        v += f->type == HUB_METRIC_HISTOGRAM ? (double)f->series[i].count
                                                             : f->series[i].value;
        pthread_mutex_unlock(&m->lock);
        return v;
}

double hub_metrics_histogram_sum(HubMetrics *m, const char *name, const char *filter)
{
        double v = 0;
        Family *f;

        pthread_mutex_lock(&m->lock);
        f = family_find(m, name);
        for (size_t i = 0; f && f->type == HUB_METRIC_HISTOGRAM && i < f->n_series; i++)
                if (!filter || strstr(f->series[i].labels, filter))
                        v += f->series[i].value;
        pthread_mutex_unlock(&m->lock);
        return v;
}

char *hub_metrics_label(const char *key, const char *value)
{
        _cleanup_buf_ Buf b = BUF_INIT(64 * 1024);
        char *ret = NULL;

        if (buf_appendf(&b, "%s=\"", key) < 0)
                return NULL;
        for (const char *p = strempty(value); *p; p++) {
                int r;

                if (*p == '\\')
                        r = buf_append_str(&b, "\\\\");
                else if (*p == '"')
                        r = buf_append_str(&b, "\\\"");
                else if (*p == '\n')
                        r = buf_append_str(&b, "\\n");
                else
                        r = buf_append_char(&b, *p);
                if (r < 0)
                        return NULL;
        }
        if (buf_append_char(&b, '"') < 0 || buf_take(&b, &ret, NULL) < 0)
                return NULL;
        return ret;
}
