/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Metrics in Prometheus' text exposition format (version 0.0.4): counters,
 * gauges and histograms, each family described once with its help text,
 * series keyed by their label set written as Prometheus writes it
 * (`controller="infraenv",result="success"`, label values escaped by
 * the caller through hub_metrics_label()). Thread-safe.
 */

#include <stdbool.h>

typedef struct HubMetrics HubMetrics;

typedef enum HubMetricType {
        HUB_METRIC_COUNTER,
        HUB_METRIC_GAUGE,
        HUB_METRIC_HISTOGRAM,
} HubMetricType;

int hub_metrics_new(HubMetrics **ret);
HubMetrics *hub_metrics_free(HubMetrics *m);

/* Declares a family (before use; again is a no-op). */
int hub_metrics_describe(HubMetrics *m, const char *name, HubMetricType type, const char *help);

void hub_metrics_add(HubMetrics *m, const char *name, const char *labels, double v);
void hub_metrics_set(HubMetrics *m, const char *name, const char *labels, double v);
/* A histogram observation (seconds); buckets 5 ms to 60 s. */
void hub_metrics_observe(HubMetrics *m, const char *name, const char *labels, double v);

/* Called at each render, before the text is made (to set gauges). */
typedef void (*HubMetricsCollectFn)(HubMetrics *m, void *userdata);
int hub_metrics_add_collector(HubMetrics *m, HubMetricsCollectFn fn, void *userdata);

/* The whole exposition; allocated. */
int hub_metrics_render(HubMetrics *m, char **ret);

/* A series' value (counter, gauge) or count (histogram); 0 when absent. */
double hub_metrics_get(HubMetrics *m, const char *name, const char *labels);
/* The sum of a histogram's observations over every series whose labels
 * contain filter (NULL: all). */
double hub_metrics_histogram_sum(HubMetrics *m, const char *name, const char *filter);
/* The sum over every series of a family whose labels contain `filter`
 * (a substring such as `controller="agent"`; NULL: all). */
double hub_metrics_sum(HubMetrics *m, const char *name, const char *filter);

/* `key="value"` with the value escaped (\\, \", \n); allocated. */
char *hub_metrics_label(const char *key, const char *value);
