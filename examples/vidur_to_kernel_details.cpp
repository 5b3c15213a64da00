// vidur_to_kernel_details: vidur's per-operator GPU profiles (mlp.csv, attention.csv) ->
// perfcast's minimal kernel_details subset (docs/profiles.md), so the model can be scored and
// fitted on GPU measurements with `perfcast validate` / `perfcast calibrate`. The mapping is in
// vidur.hpp; which profile a file is, its header says.
//
//   vidur_to_kernel_details MLP.csv [-o OUT.csv]        every measurement (stdout without -o)
//   vidur_to_kernel_details MLP.csv --split DIR         DIR/fit.csv: tp 1 and <= 1024 tokens;
//                                                       DIR/test.csv: the rest
//   vidur_to_kernel_details ATTENTION.csv --split DIR   DIR/fit.csv: tp 1 and 2; DIR/test.csv:
//                                                       tp 4 and 8
//   options: --stat median|mean (default median), --block-dim N (default 108, the A100's SMs),
//            --chip NAME (the preset whose SMs are the block dim: --chip a40 for an A40 file)
//
// Example (docs/validation.md):
//   vidur_to_kernel_details tests/data/gpu/vidur_a100_llama2-7b_mlp.csv --split /tmp/a100
//   perfcast validate --chip a100-80gb-sxm --fit /tmp/a100/fit.csv --test /tmp/a100/test.csv
#include <charconv>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <perfcast/chips.hpp>

#include "vidur.hpp"

namespace {

constexpr std::string_view usage =
    "Usage: vidur_to_kernel_details PROFILE.csv [-o OUT.csv] [--stat median|mean]\n"
    "                               [--block-dim N | --chip NAME]\n"
    "       vidur_to_kernel_details PROFILE.csv --split DIR [--stat median|mean]\n"
    "                               [--block-dim N | --chip NAME]\n"
    "\n"
    "Converts vidur's per-operator profile (mlp.csv or attention.csv: time_stats.<op>.<stat>\n"
    "in ms; the header says which) into the minimal kernel_details subset perfcast reads, one\n"
    "row per (operator, measurement): attention as FlashAttentionScore rows (FlashInfer's\n"
    "backend as BatchPrefillWithPagedKVCache@0.0.6). --split writes DIR/fit.csv (mlp.csv:\n"
    "tensor-parallel degree 1, num_tokens <= 1024; attention.csv: degrees 1 and 2) and\n"
    "DIR/test.csv (the rest; DIR is made if missing); without it every row goes to OUT.csv\n"
    "(default: stdout). Each row's Block Dim is --block-dim, or the SMs of the --chip preset\n"
    "(vidur's files do not name their GPU); default 108, the A100's.\n";

struct arguments {
    std::string input;
    std::optional<std::string> output;
    std::optional<std::string> split_dir;
    perfcast::vidur::statistic stat = perfcast::vidur::statistic::median;
    int block_dim = perfcast::vidur::a100_sms;
};

[[noreturn]] void usage_error(const std::string& what) {
    std::cerr << "vidur_to_kernel_details: " << what << "\n\n" << usage;
    std::exit(2);
}

arguments parse(int argc, char** argv) {
    arguments a;
    bool block_dim_given = false, chip_given = false;
    std::vector<std::string_view> args(argv + 1, argv + argc);
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view w = args[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) usage_error(std::string(w) + " needs a value");
            return std::string(args[++i]);
        };
        if (w == "-h" || w == "--help") {
            std::cout << usage;
            std::exit(0);
        } else if (w == "-o" || w == "--output") {
            a.output = value();
        } else if (w == "--split") {
            a.split_dir = value();
        } else if (w == "--stat") {
            const std::string s = value();
            const auto stat = perfcast::parse_in(perfcast::vidur::statistic_names, s);
            if (!stat) {
                usage_error("--stat is " + perfcast::choices_of(perfcast::vidur::statistic_names) +
                            ", not '" + s + "'");
            }
            a.stat = *stat;
        } else if (w == "--block-dim") {
            const std::string s = value();
            const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), a.block_dim);
            if (ec != std::errc{} || end != s.data() + s.size() || a.block_dim < 1)
                usage_error("--block-dim needs a positive integer, not '" + s + "'");
            if (chip_given) usage_error("--block-dim and --chip exclude each other");
            if (block_dim_given) usage_error("--block-dim is given twice");
            block_dim_given = true;
        } else if (w == "--chip") {
            const std::string s = value();
            const auto c = perfcast::chips::find_chip(s);
            if (!c) {
                usage_error("--chip is one of " + perfcast::chips::known_chip_names() + ", not '" +
                            s + "'");
            }
            if (block_dim_given) usage_error("--block-dim and --chip exclude each other");
            if (chip_given) usage_error("--chip is given twice");
            a.block_dim = c->cube.cores;
            chip_given = true;
        } else if (w.starts_with("-")) {
            usage_error("unknown option '" + std::string(w) + "'");
        } else if (a.input.empty()) {
            a.input = std::string(w);
        } else {
            usage_error("unexpected argument '" + std::string(w) + "'");
        }
    }
    if (a.input.empty()) usage_error("needs PROFILE.csv");
    if (a.output && a.split_dir) usage_error("-o and --split exclude each other");
    return a;
}

std::ofstream open_output(const std::string& path) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw perfcast::error("vidur_to_kernel_details: cannot write '" + path + "'");
    return f;
}

// Writes `rows` (mlp or attention measurements) as the arguments ask.
template <class Row>
void convert(const arguments& a, const std::vector<Row>& rows) {
    if (a.split_dir) {
        const auto s = perfcast::vidur::split(rows);
        // DIR is made when it is not there (a file in its way is reported by open_output).
        std::error_code ec;
        std::filesystem::create_directories(*a.split_dir, ec);
        auto fit = open_output(*a.split_dir + "/fit.csv");
        auto test = open_output(*a.split_dir + "/test.csv");
        const std::size_t nf = perfcast::vidur::write_profile(fit, s.fit, a.block_dim);
        const std::size_t nt = perfcast::vidur::write_profile(test, s.test, a.block_dim);
        fit.close();
        test.close();
        if (!fit || !test) throw perfcast::error("vidur_to_kernel_details: write failed");
        std::cerr << "fit.csv: " << nf << " kernel rows from " << s.fit.size()
                  << " measurements; test.csv: " << nt << " kernel rows from " << s.test.size()
                  << " measurements (" << name_of(a.stat) << ")\n";
    } else if (a.output) {
        auto out = open_output(*a.output);
        const std::size_t n = perfcast::vidur::write_profile(out, rows, a.block_dim);
        out.close();
        if (!out) throw perfcast::error("vidur_to_kernel_details: write failed");
        std::cerr << *a.output << ": " << n << " kernel rows from " << rows.size()
                  << " measurements (" << name_of(a.stat) << ")\n";
    } else {
        (void)perfcast::vidur::write_profile(std::cout, rows, a.block_dim);
    }
}

}  // namespace

int main(int argc, char** argv) {
    const arguments a = parse(argc, argv);
    try {
        std::ifstream in(a.input, std::ios::binary);
        if (!in) throw perfcast::error("vidur_to_kernel_details: cannot read '" + a.input + "'");
        std::string header;
        std::getline(in, header);
        in.clear();
        in.seekg(0);
        if (perfcast::vidur::is_attention_header(header)) {
            convert(a, perfcast::vidur::read_attention(in, a.input, a.stat));
        } else {
            convert(a, perfcast::vidur::read_mlp(in, a.input, a.stat));
        }
    } catch (const std::exception& e) {
        std::cerr << e.what() << '\n';
        return 1;
    }
    return 0;
}
