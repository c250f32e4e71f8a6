/*
 * cdp: a small Chrome DevTools Protocol client for tests, over the pipe
 * transport. Chromium started with --remote-debugging-pipe reads commands
 * on its fd 3 and writes replies and events on its fd 4, each message one
 * JSON text ended by a NUL byte.
 *
 * cdp_start launches a headless browser in its own process group with a
 * fresh profile directory, opens one page and attaches to it (flat
 * sessions, so page commands carry a sessionId). Every read has a
 * deadline: a browser that hangs fails the call, never the test run.
 * While waiting for a reply the client files the page's events: console
 * errors, uncaught exceptions, error log entries, dialogs (each dismissed),
 * and the load event.
 *
 * cdp_stop always ends the browser (Browser.close, then SIGKILL to its
 * process group if it has not gone) and removes the profile directory; it
 * is safe to call on a client that never started or already stopped.
 *
 * Not thread-safe. Calls that fail put a one-line reason in cdp->error.
 */
#ifndef JBPF_TEST_CDP_H
#define JBPF_TEST_CDP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "json.h"

#define CDP_TIMEOUT_MS 15000   /* one command's reply; a loaded 2-core machine can be slow */
#define CDP_START_TIMEOUT_MS 30000

struct cdp {
	pid_t pid;             /* the browser, leader of its process group; 0 when not running */
	int to_browser;        /* its fd 3 */
	int from_browser;      /* its fd 4 */
	char dir[256];         /* the browser's profile directory, removed by cdp_stop */
	char session[128];     /* the page's session id */
	char *buf;             /* bytes read, not yet a whole message */
	size_t len, cap;
	int next_id;

	/* What the page did, since cdp_start or cdp_clear_events. */
	char errors[8192];     /* one line per console error, exception or error log entry */
	size_t nr_errors;
	int dialogs;           /* javascript dialogs opened (alert, confirm, prompt) */
	bool loaded;           /* Page.loadEventFired seen */

	char error[512];       /* why the last failed call failed */
};

/* Launches chromium (path to the binary); 0, or -1 with cdp->error set. */
int cdp_start(struct cdp *cdp, const char *chromium);
void cdp_stop(struct cdp *cdp);

/*
 * Sends method with params (a JSON object text, or NULL for none) to the
 * page (page true) or the browser, and waits for its reply. Returns the
 * reply's "result" inside the whole message, which the caller frees with
 * json_free(*msg); NULL on an error reply, a timeout or a dead browser.
 */
const struct json *cdp_call(struct cdp *cdp, bool page, const char *method, const char *params,
			    struct json **msg);

/* Navigates the page to url and waits for its load event. 0 or -1. */
int cdp_navigate(struct cdp *cdp, const char *url);

/*
 * Evaluates a JavaScript expression in the page (by value, no user gesture)
 * and returns its value as a string: strings as they are, numbers and
 * booleans as JSON writes them, null and undefined as "null". The caller
 * frees it. NULL when it threw or the call failed.
 */
char *cdp_eval(struct cdp *cdp, const char *expression);

/*
 * Evaluates expression until it yields true or timeout_ms passes, handling
 * events in between. 0 when it became true, -1 otherwise.
 */
int cdp_wait_true(struct cdp *cdp, const char *expression, int timeout_ms);

/* A real mouse event: type "mouseMoved", "mousePressed" or "mouseReleased" at (x, y) CSS pixels. */
int cdp_mouse(struct cdp *cdp, const char *type, double x, double y);
/* mousePressed then mouseReleased, left button. */
int cdp_click(struct cdp *cdp, double x, double y);

/* Writes a PNG screenshot of the page's viewport to path. 0 or -1. */
int cdp_screenshot(struct cdp *cdp, const char *path);

void cdp_clear_events(struct cdp *cdp);

#endif /* JBPF_TEST_CDP_H */
