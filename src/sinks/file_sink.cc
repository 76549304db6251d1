#include "sinks/file_sink.h"

#include <fcntl.h>
#include <unistd.h>


namespace keyshard {
namespace {

class FileSink final : public Sink {
 public:
  FileSink(std::string name, FileDescriptor fd, bool owned, bool quiet_on_broken_pipe)
      : name_(std::move(name)),
        fd_(std::move(fd)),
        owned_(owned),
        quiet_on_broken_pipe_(quiet_on_broken_pipe) {}
  ~FileSink() override {
    if (!owned_) fd_.release();
  }

  Status write(std::string_view block) override {
    int error_number = 0;
    Status status = write_all(fd_.get(), block, name_, &error_number);
    if (!status && quiet_on_broken_pipe_ && error_number == EPIPE) return Status::quiet_stop();
    return status;
  }

  Status finish() override {
    if (!owned_) {
      fd_.release();
      return {};
    }
    return fd_.close(name_);
  }

  const std::string& name() const override { return name_; }

 private:
  std::string name_;
  FileDescriptor fd_;
  bool owned_;
  bool quiet_on_broken_pipe_;
};

}  // namespace

Status open_file_sink(const std::string& path, std::unique_ptr<Sink>& sink) {
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (!fd.valid()) return Status::error("cannot create: " + errno_text(errno), path);
  sink = std::make_unique<FileSink>(path, std::move(fd), true, false);
  return {};
}

std::unique_ptr<Sink> make_stdout_sink() {
  return std::make_unique<FileSink>("<stdout>", FileDescriptor(STDOUT_FILENO), false, true);
}

std::unique_ptr<Sink> make_stderr_sink() {
  return std::make_unique<FileSink>("<stderr>", FileDescriptor(STDERR_FILENO), false, false);
}

}  // namespace keyshard
