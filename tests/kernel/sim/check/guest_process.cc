#include "guest_process.h"

#include "verdict.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace sim_check
{
namespace
{

// The exits of the children reaped so far, by pid.
std::map<pid_t, int> &Exits()
{
	static std::map<pid_t, int> exits;
	return exits;
}

int ShellStatus(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

// In the child, between fork and exec: a failure is said on stderr and the
// child exits 127, as a shell's failed command.
[[noreturn]] void Child(const std::vector<std::string> &argv, const SpawnOptions &options)
{
	// SIGPIPE is ignored by a scenario (writes to an exited driver must not
	// end it); its children get the default back.
	std::signal(SIGPIPE, SIG_DFL);
	if (!options.cgroup.empty()) {
		const int fd = open((options.cgroup + "/cgroup.procs").c_str(), O_WRONLY);
		const std::string pid = std::to_string(getpid());
		if (fd < 0 ||
		    write(fd, pid.data(), pid.size()) != static_cast<ssize_t>(pid.size())) {
			std::fprintf(stderr, "sim_check: cannot join %s: %s\n",
				     options.cgroup.c_str(), std::strerror(errno));
			_exit(127);
		}
		close(fd);
	}
	const int input = options.input >= 0 ? options.input : open("/dev/null", O_RDONLY);
	if (input >= 0 && input != 0)
		dup2(input, 0);
	const int flags = O_WRONLY | O_CREAT | (options.append ? O_APPEND : O_TRUNC);
	if (!options.output.empty()) {
		const int fd = open(options.output.c_str(), flags, 0644);
		if (fd < 0)
			_exit(127);
		dup2(fd, 1);
		dup2(fd, 2);
	}
	if (!options.errors.empty()) {
		const int fd = open(options.errors.c_str(), flags, 0644);
		if (fd < 0)
			_exit(127);
		dup2(fd, 2);
	}
	std::vector<char *> args;
	for (const std::string &arg : argv)
		args.push_back(const_cast<char *>(arg.c_str()));
	args.push_back(nullptr);
	execvp(args[0], args.data());
	std::fprintf(stderr, "sim_check: cannot run %s: %s\n", args[0], std::strerror(errno));
	_exit(127);
}

} // namespace

pid_t Spawn(const std::vector<std::string> &argv, const SpawnOptions &options)
{
	if (argv.empty())
		return -1;
	std::fflush(stdout);
	std::fflush(stderr);
	const pid_t pid = fork();
	if (pid == 0)
		Child(argv, options);
	if (pid < 0)
		std::fprintf(stderr, "sim_check: cannot fork for %s: %s\n", argv[0].c_str(),
			     std::strerror(errno));
	return pid;
}

bool Running(pid_t pid)
{
	if (pid <= 0 || Exits().count(pid))
		return false;
	int status = 0;
	const pid_t got = waitpid(pid, &status, WNOHANG);
	if (got == pid) {
		Exits()[pid] = ShellStatus(status);
		return false;
	}
	return got == 0;
}

int Reap(pid_t pid)
{
	if (pid <= 0)
		return -1;
	const auto it = Exits().find(pid);
	if (it != Exits().end())
		return it->second;
	int status = 0;
	pid_t got;
	do
		got = waitpid(pid, &status, 0);
	while (got < 0 && errno == EINTR);
	if (got != pid)
		return -1;
	return Exits()[pid] = ShellStatus(status);
}

bool WaitExit(pid_t pid, double seconds)
{
	const double t0 = Uptime();
	while (Running(pid)) {
		if (Uptime() - t0 >= seconds)
			return false;
		Nap(0.05);
	}
	return true;
}

int Interrupt(pid_t pid)
{
	if (pid <= 0)
		return -1;
	kill(pid, SIGINT);
	if (!WaitExit(pid, 60))
		kill(pid, SIGKILL);
	return Reap(pid);
}

int RunFor(const std::vector<std::string> &argv, const std::string &output,
	   const std::string &errors, double seconds)
{
	SpawnOptions options;
	options.output = output;
	options.errors = errors;
	const pid_t pid = Spawn(argv, options);
	if (pid < 0)
		return 127;
	if (!WaitExit(pid, seconds)) {
		kill(pid, SIGKILL);
		Reap(pid);
		return 124;
	}
	return Reap(pid);
}

double Uptime()
{
	timespec now{};
	clock_gettime(CLOCK_BOOTTIME, &now);
	return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

void Ktime(const std::string &step)
{
	std::printf("GPUQ-KTIME %s %s %.2f\n", KernelLabel(), step.c_str(), Uptime());
	std::fflush(stdout);
}

void Nap(double seconds)
{
	timespec span{};
	span.tv_sec = static_cast<time_t>(seconds);
	span.tv_nsec = static_cast<long>((seconds - static_cast<double>(span.tv_sec)) * 1e9);
	while (nanosleep(&span, &span) != 0 && errno == EINTR) {
	}
}

bool WriteText(const std::string &path, const std::string &text)
{
	std::ofstream out(path);
	out << text;
	out.flush();
	return static_cast<bool>(out);
}

std::vector<std::string> Entries(const std::string &dir)
{
	std::vector<std::string> names;
	DIR *d = opendir(dir.c_str());
	if (!d)
		return names;
	while (const dirent *e = readdir(d))
		if (e->d_name[0] != '.')
			names.push_back(e->d_name);
	closedir(d);
	return names;
}

std::string ReadText(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	std::ostringstream text;
	text << in.rdbuf();
	return text.str();
}

std::string FirstLine(const std::string &path)
{
	const std::string text = ReadText(path);
	return text.substr(0, text.find('\n'));
}

std::string Terminate(pid_t pid)
{
	if (pid <= 0)
		return "exit -1";
	kill(pid, SIGTERM);
	if (WaitExit(pid, 10))
		return "exit " + std::to_string(Reap(pid));
	kill(pid, SIGKILL);
	Reap(pid);
	return "hung";
}

bool Exists(const std::string &path)
{
	struct stat st;
	return stat(path.c_str(), &st) == 0;
}

void AppendText(const std::string &path, const std::string &text)
{
	std::ofstream(path, std::ios::app) << text;
}

void AppendFile(const std::string &from, const std::string &to)
{
	std::ofstream out(to, std::ios::app | std::ios::binary);
	out << ReadText(from);
}

std::string Threads(pid_t pid)
{
	const std::string dir = "/proc/" + std::to_string(pid) + "/task";
	std::string out;
	for (const std::string &task : Entries(dir)) {
		const std::string t = dir + "/" + task;
		auto first_line = [&](const std::string &file) {
			std::string text = ReadText(t + "/" + file);
			return text.substr(0, text.find('\n'));
		};
		const std::string stat = first_line("stat");
		// the state follows the command's closing parenthesis
		const size_t close = stat.rfind(')');
		const std::string state = close != std::string::npos && close + 2 < stat.size()
					      ? stat.substr(close + 2, 1)
					      : "";
		const std::string syscall = first_line("syscall");
		out += "thread " + task + " " + first_line("comm") + " state " + state +
		       " syscall " + syscall.substr(0, syscall.find(' ')) + " wchan " +
		       first_line("wchan") + "\n";
		std::istringstream stack(ReadText(t + "/stack"));
		for (std::string line; std::getline(stack, line);)
			out += "  " + line + "\n";
	}
	return out;
}

} // namespace sim_check
