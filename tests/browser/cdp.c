/*
 * cdp: the DevTools pipe client for the browser tests (contract in cdp.h).
 *
 * The browser is the leader of a process group of its own, so that its
 * helpers (zygote, renderer, GPU and network services) can be ended with one
 * kill of that group, by the id of the process this client started. It also
 * gets PR_SET_PDEATHSIG, so a test killed outright does not leave it behind;
 * the helpers leave when the browser does. The crash handlers
 * (chrome_crashpad_handler) start sessions of their own, out of reach of
 * that kill; they exit when the browser's connection to them closes.
 *
 * HOME and the XDG directories point into the temporary directory, so the
 * browser writes nothing (crash database, caches) outside it.
 */
#include "cdp.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Messages are small but for screenshots (a few hundred KiB); anything past this is a broken browser. */
#define MAX_MESSAGE (64u << 20)

static void set_error(struct cdp *cdp, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cdp->error, sizeof(cdp->error), fmt, ap);
	va_end(ap);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void add_error(struct cdp *cdp, const char *what, const char *text)
{
	size_t used = strlen(cdp->errors);

	cdp->nr_errors++;
	snprintf(cdp->errors + used, sizeof(cdp->errors) - used, "%s: %s\n", what, text ? text : "(no text)");
}

static int write_all(struct cdp *cdp, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(cdp->to_browser, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			set_error(cdp, "writing to the browser: %s", strerror(errno));
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Sends one message; *id is its id. The text of params must be a JSON object or NULL. */
static int send_command(struct cdp *cdp, bool page, const char *method, const char *params, int *id)
{
	size_t size = strlen(method) + (params ? strlen(params) : 0) + sizeof(cdp->session) + 96;
	char *msg = malloc(size);
	int len, err;

	if (!msg) {
		set_error(cdp, "out of memory");
		return -1;
	}
	*id = ++cdp->next_id;
	len = snprintf(msg, size, "{\"id\":%d%s%s%s,\"method\":\"%s\",\"params\":%s}", *id,
		       page ? ",\"sessionId\":\"" : "", page ? cdp->session : "", page ? "\"" : "", method,
		       params ? params : "{}");
	/* The terminating NUL is the message separator. */
	err = write_all(cdp, msg, (size_t)len + 1);
	free(msg);
	return err;
}

/* The next whole message, or NULL (the reason in cdp->error): past the deadline, browser gone, not JSON. */
static struct json *read_message(struct cdp *cdp, long long deadline)
{
	for (;;) {
		char *nul = cdp->len ? memchr(cdp->buf, '\0', cdp->len) : NULL;
		struct pollfd pfd = { .fd = cdp->from_browser, .events = POLLIN };
		long long left;
		ssize_t n;
		int ready;

		if (nul) {
			size_t mlen = (size_t)(nul - cdp->buf);
			struct json *msg = json_parse(cdp->buf, mlen);

			memmove(cdp->buf, nul + 1, cdp->len - mlen - 1);
			cdp->len -= mlen + 1;
			if (!msg)
				set_error(cdp, "the browser sent a message that is not JSON");
			return msg;
		}
		left = deadline - now_ms();
		if (left <= 0) {
			set_error(cdp, "no message from the browser in time");
			return NULL;
		}
		ready = poll(&pfd, 1, (int)(left > 1000 ? 1000 : left));
		if (ready < 0 && errno != EINTR) {
			set_error(cdp, "poll: %s", strerror(errno));
			return NULL;
		}
		if (ready <= 0)
			continue;
		if (cdp->cap - cdp->len < 65536) {
			size_t ncap = cdp->cap ? cdp->cap * 2 : 262144;
			char *nbuf;

			if (ncap > MAX_MESSAGE) {
				set_error(cdp, "a message from the browser is longer than %u bytes", MAX_MESSAGE);
				return NULL;
			}
			nbuf = realloc(cdp->buf, ncap);
			if (!nbuf) {
				set_error(cdp, "out of memory");
				return NULL;
			}
			cdp->buf = nbuf;
			cdp->cap = ncap;
		}
		n = read(cdp->from_browser, cdp->buf + cdp->len, cdp->cap - cdp->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			set_error(cdp, "the browser closed its pipe (it exited or crashed)");
			return NULL;
		}
		cdp->len += (size_t)n;
	}
}

static void handle_event(struct cdp *cdp, const struct json *msg)
{
	const char *method = json_string_at(msg, "method");
	const char *type;
	int id;

	if (!method)
		return;
	if (!strcmp(method, "Page.loadEventFired")) {
		cdp->loaded = true;
	} else if (!strcmp(method, "Runtime.exceptionThrown")) {
		const char *text = json_string_at(msg, "params.exceptionDetails.exception.description");

		add_error(cdp, "exception", text ? text : json_string_at(msg, "params.exceptionDetails.text"));
	} else if (!strcmp(method, "Runtime.consoleAPICalled")) {
		type = json_string_at(msg, "params.type");
		if (type && (!strcmp(type, "error") || !strcmp(type, "assert"))) {
			const struct json *args = json_at(msg, "params.args");
			const char *text = NULL;

			if (args && args->type == JSON_ARRAY && args->nr)
				text = json_string_at(args->items[0], "value");
			add_error(cdp, "console.error", text);
		}
	} else if (!strcmp(method, "Log.entryAdded")) {
		type = json_string_at(msg, "params.entry.level");
		if (type && !strcmp(type, "error"))
			add_error(cdp, "log", json_string_at(msg, "params.entry.text"));
	} else if (!strcmp(method, "Page.javascriptDialogOpening")) {
		cdp->dialogs++;
		add_error(cdp, "dialog", json_string_at(msg, "params.message"));
		/* A dialog blocks the page; dismiss it. The reply is not needed. */
		send_command(cdp, true, "Page.handleJavaScriptDialog", "{\"accept\":false}", &id);
	}
}

/* Handles the messages that arrive within ms milliseconds. */
static void pump(struct cdp *cdp, int ms)
{
	long long deadline = now_ms() + ms;
	struct json *msg;

	while ((msg = read_message(cdp, deadline))) {
		handle_event(cdp, msg);
		json_free(msg);
	}
}

static const struct json *call_until(struct cdp *cdp, bool page, const char *method, const char *params,
				     struct json **out, long long deadline)
{
	int id;

	*out = NULL;
	if (!cdp->pid) {
		set_error(cdp, "%s: the browser is not running", method);
		return NULL;
	}
	if (send_command(cdp, page, method, params, &id))
		return NULL;
	for (;;) {
		struct json *msg = read_message(cdp, deadline);
		const struct json *mid, *err;

		if (!msg) {
			size_t len = strlen(cdp->error);

			snprintf(cdp->error + len, sizeof(cdp->error) - len, " (waiting for %s)", method);
			return NULL;
		}
		mid = json_at(msg, "id");
		if (!mid) {
			handle_event(cdp, msg);
			json_free(msg);
			continue;
		}
		if (mid->type != JSON_NUMBER || mid->number != id) {
			json_free(msg); /* the reply to a command sent without waiting */
			continue;
		}
		err = json_at(msg, "error");
		if (err) {
			const char *text = json_string_at(err, "message");

			set_error(cdp, "%s: %s", method, text ? text : "error reply");
			json_free(msg);
			return NULL;
		}
		*out = msg;
		return json_at(msg, "result");
	}
}

const struct json *cdp_call(struct cdp *cdp, bool page, const char *method, const char *params,
			    struct json **msg)
{
	return call_until(cdp, page, method, params, msg, now_ms() + CDP_TIMEOUT_MS);
}

/* Calls and frees the reply; 0 or -1. */
static int call_simple(struct cdp *cdp, bool page, const char *method, const char *params)
{
	struct json *msg;
	const struct json *result = cdp_call(cdp, page, method, params, &msg);

	json_free(msg);
	return result ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

/* The last bytes of the browser's own log, for a failed start. */
static void log_tail(struct cdp *cdp)
{
	char path[300], tail[240];
	size_t len = strlen(cdp->error), n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/chromium.log", cdp->dir);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fseek(f, -(long)(sizeof(tail) - 1), SEEK_END))
		rewind(f);
	n = fread(tail, 1, sizeof(tail) - 1, f);
	fclose(f);
	tail[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (tail[i] == '\n')
			tail[i] = ' ';
	snprintf(cdp->error + len, sizeof(cdp->error) - len, "; browser log ends: %s", tail);
}

extern char **environ;

static bool is_home_variable(const char *var)
{
	return !strncmp(var, "HOME=", 5) || !strncmp(var, "XDG_CONFIG_HOME=", 16) || !strncmp(var, "XDG_CACHE_HOME=", 15);
}

static pid_t spawn(struct cdp *cdp, const char *chromium, int cmd_fd, int reply_fd)
{
	char profile_arg[300], log_path[300], home[300], config[320], cache[320];
	size_t nr_env = 0, n = 0;
	char **envp;
	pid_t pid;

	snprintf(profile_arg, sizeof(profile_arg), "--user-data-dir=%s/profile", cdp->dir);
	snprintf(log_path, sizeof(log_path), "%s/chromium.log", cdp->dir);
	snprintf(home, sizeof(home), "HOME=%s", cdp->dir);
	snprintf(config, sizeof(config), "XDG_CONFIG_HOME=%s/config", cdp->dir);
	snprintf(cache, sizeof(cache), "XDG_CACHE_HOME=%s/cache", cdp->dir);
	while (environ[nr_env])
		nr_env++;
	envp = malloc((nr_env + 4) * sizeof(*envp));
	if (!envp) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < nr_env; i++)
		if (!is_home_variable(environ[i]))
			envp[n++] = environ[i];
	envp[n++] = home;
	envp[n++] = config;
	envp[n++] = cache;
	envp[n] = NULL;
	pid = fork();
	if (pid) {
		free(envp);
		return pid;
	}

	/* The child: only async-signal-safe calls until exec. */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	{
		/* Out of the way of 3 and 4 first: a pipe end may already be one of them. */
		int cmd = fcntl(cmd_fd, F_DUPFD_CLOEXEC, 10), reply = fcntl(reply_fd, F_DUPFD_CLOEXEC, 10);
		int log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		char *argv[] = { (char *)chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
				 "--no-first-run", "--disable-background-networking", "--disable-component-update",
				 "--disable-sync", "--remote-debugging-pipe", profile_arg, "about:blank", NULL };

		if (cmd < 0 || reply < 0 || log < 0 || null < 0 || dup2(null, 0) < 0 || dup2(log, 1) < 0 ||
		    dup2(log, 2) < 0 || dup2(cmd, 3) < 0 || dup2(reply, 4) < 0)
			_exit(126);
		execve(chromium, argv, envp);
		_exit(127);
	}
}

int cdp_start(struct cdp *cdp, const char *chromium)
{
	int cmd[2] = { -1, -1 }, reply[2] = { -1, -1 };
	long long deadline = now_ms() + CDP_START_TIMEOUT_MS;
	char params[256], *target = NULL;
	const struct json *result;
	struct json *msg;
	const char *s;

	memset(cdp, 0, sizeof(*cdp));
	cdp->to_browser = cdp->from_browser = -1;
	if (access(chromium, X_OK)) {
		set_error(cdp, "no browser at %s (%s): install Debian's chromium (apt-get install chromium, "
			  "or ./install-deps.sh)", chromium, strerror(errno));
		return -1;
	}
	/* A browser that dies must fail a write with EPIPE, not kill the test. */
	signal(SIGPIPE, SIG_IGN);
	snprintf(cdp->dir, sizeof(cdp->dir), "%s/jbpf-chromium-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(cdp->dir)) {
		set_error(cdp, "mkdtemp %s: %s", cdp->dir, strerror(errno));
		cdp->dir[0] = '\0';
		return -1;
	}
	if (pipe2(cmd, O_CLOEXEC) || pipe2(reply, O_CLOEXEC)) {
		set_error(cdp, "pipe: %s", strerror(errno));
		goto fail;
	}
	cdp->pid = spawn(cdp, chromium, cmd[0], reply[1]);
	if (cdp->pid < 0) {
		set_error(cdp, "fork: %s", strerror(errno));
		cdp->pid = 0;
		goto fail;
	}
	setpgid(cdp->pid, cdp->pid); /* also here, so the group exists whichever runs first */
	close(cmd[0]);
	close(reply[1]);
	cmd[0] = reply[1] = -1;
	cdp->to_browser = cmd[1];
	cdp->from_browser = reply[0];

	result = call_until(cdp, false, "Target.createTarget", "{\"url\":\"about:blank\"}", &msg, deadline);
	s = result ? json_string_at(result, "targetId") : NULL;
	if (s)
		target = strdup(s);
	json_free(msg);
	if (!target) {
		if (result)
			set_error(cdp, "Target.createTarget: no targetId in the reply");
		log_tail(cdp);
		goto fail;
	}
	snprintf(params, sizeof(params), "{\"targetId\":\"%.100s\",\"flatten\":true}", target);
	free(target);
	result = call_until(cdp, false, "Target.attachToTarget", params, &msg, deadline);
	s = result ? json_string_at(result, "sessionId") : NULL;
	if (s)
		snprintf(cdp->session, sizeof(cdp->session), "%s", s);
	json_free(msg);
	if (!cdp->session[0]) {
		if (result)
			set_error(cdp, "Target.attachToTarget: no sessionId in the reply");
		goto fail;
	}
	if (call_simple(cdp, true, "Page.enable", NULL) || call_simple(cdp, true, "Runtime.enable", NULL) ||
	    call_simple(cdp, true, "Log.enable", NULL) ||
	    call_simple(cdp, true, "Emulation.setDeviceMetricsOverride",
			"{\"width\":1200,\"height\":800,\"deviceScaleFactor\":1,\"mobile\":false}"))
		goto fail;
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (cmd[i] >= 0)
			close(cmd[i]);
		if (reply[i] >= 0)
			close(reply[i]);
	}
	{
		char saved[sizeof(cdp->error)];

		memcpy(saved, cdp->error, sizeof(saved));
		cdp_stop(cdp);
		memcpy(cdp->error, saved, sizeof(saved));
	}
	return -1;
}

void cdp_stop(struct cdp *cdp)
{
	if (cdp->pid > 0) {
		int pidfd = (int)syscall(SYS_pidfd_open, cdp->pid, 0), id;

		/* Ask first: a browser that closes itself removes its helpers and locks. */
		if (cdp->to_browser >= 0)
			send_command(cdp, false, "Browser.close", NULL, &id);
		if (pidfd >= 0) {
			struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

			while (poll(&pfd, 1, 5000) < 0 && errno == EINTR)
				;
			close(pidfd);
		}
		/* The leader is not reaped yet, so the group's id still names only what we started. */
		kill(-cdp->pid, SIGKILL);
		while (waitpid(cdp->pid, NULL, 0) < 0 && errno == EINTR)
			;
		cdp->pid = 0;
	}
	if (cdp->to_browser >= 0)
		close(cdp->to_browser);
	if (cdp->from_browser >= 0)
		close(cdp->from_browser);
	cdp->to_browser = cdp->from_browser = -1;
	if (cdp->dir[0])
		nftw(cdp->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	cdp->dir[0] = '\0';
	free(cdp->buf);
	cdp->buf = NULL;
	cdp->len = cdp->cap = 0;
}

int cdp_navigate(struct cdp *cdp, const char *url)
{
	size_t size = strlen(url) * 6 + 32;
	char *params = malloc(size);
	long long deadline = now_ms() + CDP_TIMEOUT_MS;
	const struct json *result;
	const char *failed;
	struct json *msg;

	if (!params) {
		set_error(cdp, "out of memory");
		return -1;
	}
	strcpy(params, "{\"url\":");
	json_quote(params, size, url);
	strcat(params, "}");
	cdp->loaded = false;
	result = cdp_call(cdp, true, "Page.navigate", params, &msg);
	free(params);
	failed = result ? json_string_at(result, "errorText") : NULL;
	if (failed)
		set_error(cdp, "Page.navigate %s: %s", url, failed);
	json_free(msg);
	if (!result || failed)
		return -1;
	while (!cdp->loaded && cdp->pid) {
		struct json *ev = read_message(cdp, deadline);

		if (!ev) {
			set_error(cdp, "%s did not fire its load event within %d ms", url, CDP_TIMEOUT_MS);
			return -1;
		}
		handle_event(cdp, ev);
		json_free(ev);
	}
	return 0;
}

char *cdp_eval(struct cdp *cdp, const char *expression)
{
	size_t size = strlen(expression) * 6 + 64;
	char *params = malloc(size), *value = NULL;
	const struct json *result, *v;
	struct json *msg;
	const char *type, *text;

	if (!params) {
		set_error(cdp, "out of memory");
		return NULL;
	}
	strcpy(params, "{\"expression\":");
	json_quote(params, size, expression);
	strcat(params, ",\"returnByValue\":true}");
	result = cdp_call(cdp, true, "Runtime.evaluate", params, &msg);
	free(params);
	if (!result)
		goto out;
	if (json_at(result, "exceptionDetails")) {
		text = json_string_at(result, "exceptionDetails.exception.description");
		set_error(cdp, "evaluating %.200s threw: %.200s", expression,
			  text ? text : json_string_at(result, "exceptionDetails.text"));
		goto out;
	}
	type = json_string_at(result, "result.type");
	v = json_at(result, "result.value");
	if (type && !strcmp(type, "string") && v && v->type == JSON_STRING) {
		value = strdup(v->string);
	} else if (type && !strcmp(type, "boolean") && v && v->type == JSON_BOOL) {
		value = strdup(v->boolean ? "true" : "false");
	} else if (type && !strcmp(type, "number") && v && v->type == JSON_NUMBER) {
		char num[64];

		snprintf(num, sizeof(num), "%.17g", v->number);
		value = strdup(num);
	} else if (type && (!strcmp(type, "undefined") || (!strcmp(type, "object") && v && v->type == JSON_NULL))) {
		value = strdup("null");
	} else {
		set_error(cdp, "evaluating %.200s gave a value that is not a string, number or boolean", expression);
	}
out:
	json_free(msg);
	return value;
}

int cdp_wait_true(struct cdp *cdp, const char *expression, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;

	for (;;) {
		char *v = cdp_eval(cdp, expression);
		bool yes = v && !strcmp(v, "true");

		free(v);
		if (yes)
			return 0;
		if (now_ms() >= deadline || !cdp->pid) {
			set_error(cdp, "still not true after %d ms: %.300s", timeout_ms, expression);
			return -1;
		}
		pump(cdp, 20);
	}
}

int cdp_mouse(struct cdp *cdp, const char *type, double x, double y)
{
	char params[256];
	bool moved = !strcmp(type, "mouseMoved");

	snprintf(params, sizeof(params),
		 "{\"type\":\"%s\",\"x\":%.2f,\"y\":%.2f,\"button\":\"%s\",\"buttons\":%d,\"clickCount\":%d}", type, x,
		 y, moved ? "none" : "left", !strcmp(type, "mousePressed"), moved ? 0 : 1);
	return call_simple(cdp, true, "Input.dispatchMouseEvent", params);
}

int cdp_click(struct cdp *cdp, double x, double y)
{
	if (cdp_mouse(cdp, "mouseMoved", x, y) || cdp_mouse(cdp, "mousePressed", x, y))
		return -1;
	return cdp_mouse(cdp, "mouseReleased", x, y);
}

static int base64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int cdp_screenshot(struct cdp *cdp, const char *path)
{
	struct json *msg;
	const struct json *result = cdp_call(cdp, true, "Page.captureScreenshot", "{\"format\":\"png\"}", &msg);
	const char *data = result ? json_string_at(result, "data") : NULL;
	unsigned char *png = NULL;
	size_t n = 0;
	uint32_t acc = 0;
	int bits = 0, err = -1;
	FILE *f;

	if (!data) {
		if (result)
			set_error(cdp, "Page.captureScreenshot: no data in the reply");
		goto out;
	}
	png = malloc(strlen(data) / 4 * 3 + 3);
	if (!png) {
		set_error(cdp, "out of memory");
		goto out;
	}
	for (const char *p = data; *p && *p != '='; p++) {
		int v = base64_value(*p);

		if (v < 0) {
			set_error(cdp, "the screenshot is not base64");
			goto out;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			png[n++] = (unsigned char)(acc >> bits);
		}
	}
	f = fopen(path, "wb");
	if (!f) {
		set_error(cdp, "creating %s: %s", path, strerror(errno));
		goto out;
	}
	if (fwrite(png, 1, n, f) != n)
		err = -2;
	if (fclose(f) || err == -2) {
		set_error(cdp, "writing %s: %s", path, strerror(errno));
		err = -1;
		goto out;
	}
	err = 0;
out:
	free(png);
	json_free(msg);
	return err;
}

void cdp_clear_events(struct cdp *cdp)
{
	cdp->errors[0] = '\0';
	cdp->nr_errors = 0;
	cdp->dialogs = 0;
}
