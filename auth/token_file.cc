#include "auth/token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "auth/tokens.h"
#include "common/files.h"

namespace tf::auth {

Result<std::string> ReadTokenFile(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return Status::InvalidArgument(path + " holds no token");
  const auto end = text.find_last_not_of(" \t\r\n");
  std::string token = text.substr(begin, end - begin + 1);
  if (Status valid = CheckTokenText(token); !valid.ok()) {
    return Status::InvalidArgument(path + ": " + valid.message());
  }
  return token;
}

Status WriteTokenFile(const std::string& path, const std::string& token) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal("cannot create " + path + ": " + std::strerror(errno));
  const std::string line = token + "\n";
  const bool written =
      write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && fsync(fd) == 0;
  const int error = errno;
  close(fd);
  if (!written) {
    std::remove(path.c_str());
    return Status::Internal("cannot write " + path + ": " + std::strerror(error));
  }
  return Status::Ok();
}

Status CheckOwnerOnly(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return Status::NotFound("cannot stat " + path + ": " + std::strerror(errno));
  }
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", st.st_mode & 0777);
    return Status::FailedPrecondition(path + " has mode " + mode +
                                      ": a token file must be readable by its owner only "
                                      "(chmod 600 " +
                                      path + ")");
  }
  return Status::Ok();
}

}  // namespace tf::auth
