/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The agent's messages to the service manager (sd_notify(3)), for
 * packaging/systemd/cradle-agent.service (Type=notify, WatchdogSec=):
 * READY=1 once the host is registered and the instructions are polled,
 * STATUS= lines for "systemctl status", STOPPING=1, and WATCHDOG=1 from the
 * loops that poll and sleep. Without $NOTIFY_SOCKET every call does
 * nothing; without $WATCHDOG_USEC (or with another process's
 * $WATCHDOG_PID) no WATCHDOG=1 is sent. Children never see these variables
 * (lib/spawn.c leaves them out). Thread-safe.
 */

#include "macro.h"
#include "timeutil.h"

/* READY=1 with a STATUS= line; only the first call sends READY=1. */
void agent_notify_ready(const char *fmt, ...) _printf_(1, 2);
/* A STATUS= line. */
void agent_notify_status(const char *fmt, ...) _printf_(1, 2);
void agent_notify_stopping(void);

/* WATCHDOG=1 when a quarter of the watchdog interval has passed since the
 * last one; cheap to call often. */
void agent_watchdog_ping(void);
/* sleep_usec() that pings the watchdog while it sleeps. */
int agent_sleep(usec_t d);

/* While the main loop legitimately waits on one child for long (the
 * next-step-runner container of --step-runner=podman, which polls in its
 * stead), a thread pings the watchdog; end() stops it. */
typedef struct AgentKeepalive AgentKeepalive;
AgentKeepalive *agent_watchdog_keepalive_begin(void);
void agent_watchdog_keepalive_end(AgentKeepalive *k);
