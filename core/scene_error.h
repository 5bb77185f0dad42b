#pragma once
#include <stdexcept>
#include <string>

namespace ae {

// A scene (or a change to one) that the engine refuses. `path` names the field, in the form the
// reference uses (`projections.key`, `mask.allowed[1][2]`); `problem` says what is wrong.
class SceneError : public std::runtime_error {
public:
    SceneError(std::string path, std::string problem)
        : std::runtime_error(path.empty() ? problem : path + ": " + problem),
          path_(std::move(path)),
          problem_(std::move(problem)) {}
    const std::string& path() const { return path_; }
    const std::string& problem() const { return problem_; }

private:
    std::string path_;
    std::string problem_;
};

}  // namespace ae
