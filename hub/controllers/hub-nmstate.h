/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * NMStateConfig objects → the infra-env's static_network_config (notes §4).
 *
 * Each NMStateConfig gives one HostStaticNetworkConfig: mac_interface_map
 * from spec.interfaces[] ({name, macAddress} → {logical_nic_name,
 * mac_address}) and network_yaml, the nmstate YAML of spec.config. The
 * real controller sends the raw YAML that sigs.k8s.io/yaml made of the
 * object's JSON (keys sorted, block style); this module writes the same
 * kind of YAML with libyaml. The list is sorted as the service sorts it
 * before storing it (FormatStaticNetworkConfigForDB), so the hub compares
 * what it would send with what the service stores and sends nothing when
 * they are equal.
 */

#include <stddef.h>

typedef struct json_object json_object;

/* The YAML of a JSON value: mappings with their keys sorted, block style,
 * strings quoted where they would read back as another type. Allocated. */
int hub_nmstate_yaml(json_object *value, char **ret);

/* The static network config of these NMStateConfigs, sorted as the
 * service stores it. An object whose spec.interfaces is not a list of
 * {name, macAddress} strings is refused: -EINVAL and *reterr names the
 * object and the field. */
int hub_nmstate_static_config(json_object *const *configs, size_t n, json_object **ret, char **reterr);

/* Sorts a static network config list (an array of host configs, edited in
 * place) in the service's order. */
int hub_nmstate_sort(json_object *list);

/* The service's static_network_config string ("" or JSON) as a sorted
 * list; -EBADMSG when it does not parse. */
int hub_nmstate_from_service(const char *s, json_object **ret);
