#include "scrape.h"

#include "guest_process.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sim_check
{
namespace
{

constexpr double kScrapeSeconds = 10;

// The response of a GET of /metrics on PORT (headers and body), read until
// the server closes; false when it did not within the deadline.
bool Get(int port, std::string &response)
{
	const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	sockaddr_in address{};
	address.sin_family = AF_INET;
	address.sin_port = htons(static_cast<uint16_t>(port));
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	const std::string request =
	    "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
	    "\r\nConnection: close\r\n\r\n";
	bool ok = connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) == 0 &&
		  send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
		      static_cast<ssize_t>(request.size());
	const double t0 = Uptime();
	while (ok) {
		const double left = kScrapeSeconds - (Uptime() - t0);
		pollfd ready{ fd, POLLIN, 0 };
		if (left <= 0 || poll(&ready, 1, static_cast<int>(left * 1000) + 1) <= 0) {
			ok = false;
			break;
		}
		char buffer[65536];
		const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
		if (got == 0)
			break;
		if (got < 0) {
			ok = errno == EINTR;
			continue;
		}
		response.append(buffer, static_cast<size_t>(got));
	}
	close(fd);
	return ok;
}

// The header NAME's value in HEADERS (names compared without case), or "".
std::string Header(const std::string &headers, const std::string &name)
{
	size_t at = 0;
	while ((at = headers.find("\r\n", at)) != std::string::npos) {
		at += 2;
		if (headers.size() - at > name.size() && headers[at + name.size()] == ':' &&
		    strncasecmp(headers.c_str() + at, name.c_str(), name.size()) == 0) {
			size_t from = at + name.size() + 1;
			while (from < headers.size() && headers[from] == ' ')
				++from;
			return headers.substr(from, headers.find("\r\n", from) - from);
		}
	}
	return "";
}

// A chunked BODY's data; false when it is not whole.
bool Unchunk(const std::string &body, std::string &data)
{
	size_t at = 0;
	for (;;) {
		const size_t line_end = body.find("\r\n", at);
		if (line_end == std::string::npos)
			return false;
		char *end = nullptr;
		const unsigned long size = std::strtoul(body.c_str() + at, &end, 16);
		if (end == body.c_str() + at)
			return false;
		at = line_end + 2;
		if (size == 0)
			return true;
		if (body.size() < at + size + 2)
			return false;
		data.append(body, at, size);
		at += size + 2;
	}
}

} // namespace

bool Scrape(int port, const std::string &path)
{
	std::string response;
	if (!Get(port, response))
		return false;
	const size_t end = response.find("\r\n\r\n");
	if (end == std::string::npos || response.compare(0, 5, "HTTP/") != 0 ||
	    response.find(" 200 ") != response.find(' '))
		return false;
	const std::string headers = response.substr(0, end);
	std::string body = response.substr(end + 4);
	if (Header(headers, "Transfer-Encoding") == "chunked") {
		std::string data;
		if (!Unchunk(body, data))
			return false;
		body = data;
	}
	const std::string length = Header(headers, "Content-Length");
	if (!length.empty() && std::to_string(body.size()) != length)
		return false;
	const std::string partial = path + ".part";
	if (!WriteText(partial, body))
		return false;
	return std::rename(partial.c_str(), path.c_str()) == 0;
}

} // namespace sim_check
