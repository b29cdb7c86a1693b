// --npz PATH: the whole of --dump DIR in one file a notebook loads in one line. The file is a zip
// archive with the members stored uncompressed (zip_store.hpp), one per file the dump would
// write, under the same names and with the same bytes (dump_files.hpp): every tensor's .npy, and
// manifest.json (the same schema; with --shapes-only, manifest.json alone). numpy.load returns it
// as an NpzFile: z["s06_attn_weights"] is the array, z["manifest.json"] the manifest's bytes.
// The guarantees are --dump's: missing parents of PATH are created (and removed again if the
// archive never lands), the archive is written to a temporary file beside PATH and renamed to
// PATH at the end (an existing file there is replaced in that one atomic rename; a run that fails
// half-way leaves nothing), and a PATH that is a directory is refused.
#pragma once

#include <optional>
#include <string>

#include "report/stage.hpp"
#include "report/staging.hpp"

namespace attn::report {

// Refuses a PATH that cannot become the archive (a directory, something other than a regular
// file, a name ending in '/', or a nearest existing ancestor that is not a writable directory):
// throws std::runtime_error with the reason. Called before anything is written.
void check_npz_target(const std::string& path);

// The archive written to its temporary file beside `path` but not yet in place (as StagedDump):
// commit() renames it to `path`; without commit() the destructor removes it and the parents it
// created. Zip's 4 GiB limit is checked from the members' sizes before the first byte is written.
// Errors are std::runtime_error naming the member or `path`, never the temporary file.
class StagedNpz {
 public:
  StagedNpz(const Report& report, const std::string& command, const std::string& path);
  void commit();

 private:
  std::optional<StagedFile> file_;  // made once the checks passed
};

// Writes the archive of `report` to `path` atomically (see above).
void write_npz(const Report& report, const std::string& command, const std::string& path);

}  // namespace attn::report
