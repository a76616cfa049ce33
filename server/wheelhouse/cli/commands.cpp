#include "wheelhouse/cli/commands.hpp"

#include "wheelhouse/cli/backup_command.hpp"
#include "wheelhouse/cli/export_command.hpp"
#include "wheelhouse/cli/fsck_command.hpp"
#include "wheelhouse/cli/ingest_command.hpp"
#include "wheelhouse/cli/inspect_command.hpp"
#include "wheelhouse/cli/publisher_command.hpp"
#include "wheelhouse/cli/register_command.hpp"
#include "wheelhouse/cli/s3_check_command.hpp"
#include "wheelhouse/cli/s3_pull_command.hpp"
#include "wheelhouse/cli/s3_push_command.hpp"
#include "wheelhouse/cli/serve_command.hpp"
#include "wheelhouse/cli/token_command.hpp"
#include "wheelhouse/cli/upstream_commands.hpp"

namespace wheelhouse::cli {
namespace {
int g_exit_status = 0;
}

void add_commands(CLI::App& app) {
    add_serve_command(app);
    add_ingest_command(app);
    add_register_command(app);
    add_import_release_command(app);
    add_inspect_command(app);
    add_token_command(app);
    add_publisher_command(app);
    add_backup_command(app);
    add_restore_command(app);
    add_fsck_command(app);
    add_export_command(app);
    add_reserve_command(app);
    add_upstream_prune_command(app);
    add_s3_check_command(app);
    add_s3_push_command(app);
    add_s3_pull_command(app);
}

int exit_status() noexcept { return g_exit_status; }
void set_exit_status(int status) noexcept { g_exit_status = status; }

}  // namespace wheelhouse::cli
