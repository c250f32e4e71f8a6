/*
 * push: the spool's entries to Pyroscope, by its push API or its /ingest
 * (contract in push.h).
 */
#include "push.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "user/fleet/push_request.h"

struct pusher {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping, kicked;
	uint64_t flush_deadline_ns;   /* CLOCK_MONOTONIC; set with stopping */
	char *url;                    /* the base, without a trailing '/' */
	enum push_api api;
	struct spool *spool;
	int verbose;
	struct push_stats stats;
};

int push__escape(char *buf, size_t size, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '-' || c == '.' || c == '_' || c == '~';

		if (n + (keep ? 1 : 3) >= size)
			return -1;
		if (keep) {
			buf[n++] = (char)c;
		} else {
			buf[n++] = '%';
			buf[n++] = hex[c >> 4];
			buf[n++] = hex[c & 15];
		}
	}
	if (n >= size)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

int push__query(char *buf, size_t size, const char *app_name, int64_t from_s, int64_t until_s, unsigned rate_hz)
{
	char name[1024];
	int n;

	if (push__escape(name, sizeof(name), app_name) < 0)
		return -1;
	n = snprintf(buf, size,
		     "name=%s&from=%" PRId64 "&until=%" PRId64 "&sampleRate=%u&spyName=jbpfprof"
		     "&units=samples&aggregationType=sum",
		     name, from_s, until_s, rate_hz);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

/*
 * Ends a request in flight once the flush after SIGTERM is out of time: a
 * server that accepts and never answers does not hold the exit for
 * PUSH_TIMEOUT_S.
 */
static int give_up(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct pusher *p = ctx;

	return __atomic_load_n(&p->stopping, __ATOMIC_ACQUIRE) &&
	       clock__monotonic_ns() >= __atomic_load_n(&p->flush_deadline_ns, __ATOMIC_ACQUIRE);
}

/* Discards the server's answer. */
static size_t ignore_body(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	return size * nmemb;
}

/*
 * The request's body: for /ingest a multipart form around the profile
 * (into *mime), for the push API a PushRequest, for OTLP an export request
 * (into *packed, the caller frees). 0; -EBADMSG (said in err) for an entry
 * that cannot be sent so, which no retry would change; -EAGAIN.
 */
static int set_body(struct pusher *p, CURL *curl, const char *query, const void *body, size_t len,
		    curl_mime **mime, uint8_t **packed, struct curl_slist **headers, char *err, size_t err_size)
{
	char id[40];
	size_t packed_len;
	curl_mimepart *part;
	int error;

	if (p->api == PUSH_API_INGEST) {
		*mime = curl_mime_init(curl);
		part = curl_mime_addpart(*mime);
		curl_mime_name(part, "profile");
		curl_mime_filename(part, "profile.pprof");
		curl_mime_type(part, "application/octet-stream");
		curl_mime_data(part, body, len);
		curl_easy_setopt(curl, CURLOPT_MIMEPOST, *mime);
		return 0;
	}
	if (p->api == PUSH_API_OTLP) {
		error = push_request__otlp(query, body, len, packed, &packed_len, err, err_size);
		if (error)
			return error == -EINVAL ? -EBADMSG : -EAGAIN;
		*headers = curl_slist_append(NULL, "Content-Type: application/x-protobuf");
	} else {
		push_request__uuid(id, sizeof(id));
		error = push_request__encode(query, body, len, id, packed, &packed_len);
		if (error) {
			snprintf(err, err_size,
				 error == -EINVAL ? "its name is not service.event{labels}" : "out of memory");
			return error == -EINVAL ? -EBADMSG : -EAGAIN;
		}
		/* Connect's unary call: the message as the body, its errors as the HTTP status. */
		*headers = curl_slist_append(NULL, "Content-Type: application/proto");
		*headers = curl_slist_append(*headers, "Connect-Protocol-Version: 1");
	}
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, *headers);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, *packed);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)packed_len);
	return 0;
}

/*
 * One POST. 2xx: 0; a failure worth retrying: -EAGAIN; refused for good by
 * the server: -EINVAL; an entry that cannot be sent at all: -EBADMSG.
 */
static int post(struct pusher *p, const char *query, const void *body, size_t len, char *err, size_t err_size)
{
	CURL *curl = curl_easy_init();
	struct curl_slist *headers = NULL;
	curl_mime *mime = NULL;
	uint8_t *packed = NULL;
	char *url = NULL;
	long status = 0;
	CURLcode rc;
	int result = -EAGAIN;

	err[0] = '\0';
	if (!curl || (p->api == PUSH_API_INGEST	 ? asprintf(&url, "%s/ingest?%s", p->url, query)
		      : p->api == PUSH_API_OTLP ? asprintf(&url, "%s/v1development/profiles", p->url)
						: asprintf(&url, "%s/push.v1.PusherService/Push", p->url)) < 0) {
		url = NULL;
		snprintf(err, err_size, "out of memory");
		goto out;
	}
	result = set_body(p, curl, query, body, len, &mime, &packed, &headers, err, err_size);
	if (result)
		goto out;
	result = -EAGAIN;
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)PUSH_TIMEOUT_S);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, ignore_body);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "jbpfprof");
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, give_up);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	rc = curl_easy_perform(curl);
	if (rc != CURLE_OK) {
		snprintf(err, err_size, "%s", curl_easy_strerror(rc));
		goto out;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (status >= 200 && status < 300)
		result = 0;
	else if (status >= 400 && status < 500 && status != 408 && status != 429)
		result = -EINVAL;
	snprintf(err, err_size, "HTTP status %ld", status);
out:
	curl_mime_free(mime);
	curl_slist_free_all(headers);
	curl_easy_cleanup(curl);
	free(packed);
	free(url);
	return result;
}

/*
 * Waits until stopping or timeout_ns passed, and with kick_wakes until
 * kicked too; with the lock held. A backoff is not cut short by a kick:
 * a new profile does not make a failing server any likelier to answer.
 */
static void wait_locked(struct pusher *p, uint64_t timeout_ns, bool kick_wakes)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(timeout_ns / NS_PER_SEC);
	until.tv_nsec += (long)(timeout_ns % NS_PER_SEC);
	if (until.tv_nsec >= (long)NS_PER_SEC) {
		until.tv_sec++;
		until.tv_nsec -= (long)NS_PER_SEC;
	}
	while (!(kick_wakes && p->kicked) && !p->stopping)
		if (pthread_cond_timedwait(&p->wake, &p->lock, &until) == ETIMEDOUT)
			break;
	if (kick_wakes)
		p->kicked = false;
}

static void *run(void *arg)
{
	struct pusher *p = arg;
	uint64_t backoff_s = 0;
	bool failing = false;

	for (;;) {
		uint64_t seq;
		const void *body;
		char *query, err[256];
		size_t len;
		int rc;

		pthread_mutex_lock(&p->lock);
		if (p->stopping && (failing || clock__monotonic_ns() >= p->flush_deadline_ns)) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		if (backoff_s)
			wait_locked(p, backoff_s * NS_PER_SEC, false);
		pthread_mutex_unlock(&p->lock);

		rc = spool__peek(p->spool, &seq, &query, &body, &len);
		if (rc == -ENOENT) {
			pthread_mutex_lock(&p->lock);
			if (p->stopping) {
				pthread_mutex_unlock(&p->lock);
				break;
			}
			wait_locked(p, 3600 * NS_PER_SEC, true);
			pthread_mutex_unlock(&p->lock);
			continue;
		}
		if (rc)
			continue;
		rc = post(p, query, body, len, err, sizeof(err));
		/*
		 * The spool's file operations and the messages are done without
		 * p->lock: the session thread takes it to kick, and must never
		 * wait behind a disk or a full stderr pipe.
		 */
		if (rc == 0 || rc == -EINVAL || rc == -EBADMSG)
			spool__done(p->spool, seq);
		else
			spool__release(p->spool, seq);
		if (rc == 0) {
			if (failing)
				fprintf(stderr, "jbpfprof: push: the server takes profiles again\n");
			failing = false;
			backoff_s = 0;
		} else if (rc == -EBADMSG) {
			fprintf(stderr, "jbpfprof: push: a spooled profile cannot be sent (%s); dropped it\n", err);
		} else if (rc == -EINVAL) {
			fprintf(stderr, "jbpfprof: push: the server refused a profile (%s); dropped it\n", err);
		} else {
			if (!failing || p->verbose)
				fprintf(stderr, "jbpfprof: push to %s failed: %s; keeping the profiles in the spool and "
					"retrying\n", p->url, err);
			failing = true;
			backoff_s = backoff_s ? backoff_s * 2 : 1;
			if (backoff_s > PUSH_MAX_BACKOFF_S)
				backoff_s = PUSH_MAX_BACKOFF_S;
		}
		pthread_mutex_lock(&p->lock);
		if (rc == 0)
			p->stats.sent++;
		else if (rc == -EINVAL || rc == -EBADMSG)
			p->stats.rejected++;
		else
			p->stats.failures++;
		pthread_mutex_unlock(&p->lock);
		free(query);
	}
	return NULL;
}

/* The waits' deadlines are on CLOCK_MONOTONIC: so must the condition variable be (the default is CLOCK_REALTIME). */
static int init_wake(pthread_cond_t *wake)
{
	pthread_condattr_t attr;
	int error = pthread_condattr_init(&attr);

	if (!error)
		error = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!error)
		error = pthread_cond_init(wake, &attr);
	pthread_condattr_destroy(&attr);
	return error;
}

/*
 * The thread starts with every signal blocked: SIGINT and SIGTERM are the
 * recording's (read from a signalfd by the main thread, which blocks them
 * only later); delivered here, they would end the process without the
 * last interval.
 */
static int start_thread(struct pusher *p)
{
	sigset_t all, old;
	int error;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	error = pthread_create(&p->thread, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return error;
}

struct pusher *pusher__start(const char *url, enum push_api api, struct spool *spool, int verbose, char *err,
			     size_t err_size)
{
	struct pusher *p = calloc(1, sizeof(*p));
	size_t n;

	if (!p || !(p->url = strdup(url))) {
		free(p);
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	n = strlen(p->url);
	while (n && p->url[n - 1] == '/')
		p->url[--n] = '\0';
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		snprintf(err, err_size, "libcurl failed to start");
		goto fail;
	}
	p->spool = spool;
	p->api = api;
	p->verbose = verbose;
	pthread_mutex_init(&p->lock, NULL);
	if (init_wake(&p->wake)) {
		snprintf(err, err_size, "cannot make the push thread's condition variable");
		curl_global_cleanup();
		goto fail;
	}
	if (start_thread(p)) {
		snprintf(err, err_size, "cannot start the push thread");
		pthread_cond_destroy(&p->wake);
		curl_global_cleanup();
		goto fail;
	}
	return p;
fail:
	free(p->url);
	free(p);
	return NULL;
}

void pusher__kick(struct pusher *p)
{
	pthread_mutex_lock(&p->lock);
	p->kicked = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
}

void pusher__stop(struct pusher *p, unsigned flush_s)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	__atomic_store_n(&p->flush_deadline_ns, clock__monotonic_ns() + (uint64_t)flush_s * NS_PER_SEC,
			 __ATOMIC_RELEASE);
	__atomic_store_n(&p->stopping, true, __ATOMIC_RELEASE);
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	curl_global_cleanup();
	free(p->url);
	free(p);
}

void pusher__stats(struct pusher *p, struct push_stats *stats)
{
	pthread_mutex_lock(&p->lock);
	*stats = p->stats;
	pthread_mutex_unlock(&p->lock);
}
