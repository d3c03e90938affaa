// Plots of CSV results through gnuplot.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "paynter/files.h"
#include "paynter/process.h"
#include "paynter/report.h"

namespace paynter {

namespace {
std::vector<std::string> ReadHeader(const std::string& csv_path) {
  RequireRegularInput(csv_path, "CSV file", "a CSV file from 'paynter simulate'", "give the path of a .csv file");
  std::ifstream in(csv_path);
  if (!in) {
    ThrowAt({csv_path, 0, 0}, "", "cannot open the CSV file", "", "", "run 'paynter simulate ... -o FILE.csv' first");
  }
  std::string line;
  if (!std::getline(in, line) || line.empty()) {
    ThrowAt({csv_path, 1, 0}, "", "the CSV file has no header line", "t,<column>,...");
  }
  std::vector<std::string> cols;
  std::stringstream ss(line);
  std::string c;
  while (std::getline(ss, c, ',')) cols.push_back(c);
  std::string second;
  if (!std::getline(in, second)) {
    ThrowAt({csv_path, 2, 0}, "", "the CSV file has no data rows");
  }
  return cols;
}

int IndexOf(const std::vector<std::string>& cols, const std::string& name, const std::string& csv) {
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i] == name) return static_cast<int>(i) + 1;  // gnuplot columns are 1-based
  std::string list;
  for (const auto& c : cols) list += (list.empty() ? "" : ", ") + c;
  ThrowAt({csv, 1, 0}, "", fmt::format("no column '{}' in the CSV file", name), "one of: " + list, name);
}

// A gnuplot string expression whose value is exactly `s`. gnuplot performs
// backquote (command) and @macro substitution on its input lines, except inside
// single-quoted strings, which also take backslashes literally. Control
// characters (a newline would end the command) cannot be written inside single
// quotes, and a single quote cannot be written doubled at the start of one
// (gnuplot reads four quotes as two empty strings): each of these is joined on
// as a double-quoted octal escape ("\012", "\047"), which holds nothing else
// to substitute.
std::string GnuplotString(const std::string& s) {
  std::string out;
  bool open = false;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 32 || u == 127 || c == '\'') {
      if (open) out += '\'';
      open = false;
      out += fmt::format("{}\"\\{:03o}\"", out.empty() ? "" : ".", u);
      continue;
    }
    if (!open) out += out.empty() ? "'" : ".'";
    open = true;
    out += c;
  }
  if (out.empty()) return "''";
  if (open) out += '\'';
  return out;
}
}  // namespace

namespace {
// The gnuplot terminal for an image file, from its extension.
std::string Terminal(const std::string& out_path) {
  const std::string ext = std::filesystem::path(out_path).extension().string();
  if (ext == ".png") return "pngcairo size 1000,650 noenhanced";
  if (ext == ".svg") return "svg size 1000,650 noenhanced";
  if (ext == ".pdf") return "pdfcairo noenhanced";
  ThrowAt({out_path, 0, 0}, "", "unknown plot format", "a file name ending in .png, .svg or .pdf",
          ext.empty() ? "no extension" : ext);
}

// Runs gnuplot on `body` (the commands after the terminal and output lines),
// writing `out_path` atomically.
void Render(const std::string& out_path, const std::string& terminal, const std::string& body) {
  namespace fs = std::filesystem;
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    throw Error(fmt::format("{}: error: gnuplot is not installed\n  hint: run scripts/setup.sh (apt-get install gnuplot-nox)", out_path));
  const std::string tmp = TemporaryBeside(out_path);
  std::ostringstream gp;
  // Paths are made absolute: gnuplot would take a name starting with '-' for an option.
  gp << "set terminal " << terminal << "\n"
     << "set output " << GnuplotString(fs::absolute(tmp).string()) << "\n"
     << body << "\nset output\n";
  std::error_code ec;
  std::string script;
  try {
    script = TemporaryBeside(out_path, ".gp");
    WriteFileAtomically(script, gp.str(), "gnuplot script");
  } catch (...) {
    fs::remove(tmp, ec);
    if (!script.empty()) fs::remove(script, ec);
    throw;
  }
  std::string msg;
  const int rc = RunTool({"gnuplot", fs::absolute(script).string()}, &msg);
  fs::remove(script, ec);
  if (rc != 0 || fs::file_size(tmp, ec) == 0) {
    fs::remove(tmp, ec);
    throw Error(fmt::format("{}: error: gnuplot failed: {}", out_path, msg));
  }
  MoveIntoPlace(tmp, out_path, "plot");
}
}  // namespace

void PlotCsv(const std::string& csv_path, const std::string& out_path, const std::vector<std::string>& columns,
             const std::string& x_column, const std::string& title) {
  namespace fs = std::filesystem;
  const auto cols = ReadHeader(csv_path);
  const int xi = x_column.empty() ? 1 : IndexOf(cols, x_column, csv_path);
  std::vector<int> ys;
  if (columns.empty()) {
    for (size_t i = 1; i <= cols.size(); ++i)
      if (static_cast<int>(i) != xi) ys.push_back(static_cast<int>(i));
  } else {
    for (const auto& c : columns) ys.push_back(IndexOf(cols, c, csv_path));
  }
  const std::string terminal = Terminal(out_path);
  std::ostringstream gp;
  gp << "set datafile separator ','\n"
     << "set key outside right top\n"
     << "set grid\n"
     << "set xlabel " << GnuplotString(cols[xi - 1]) << "\n";
  if (!title.empty()) gp << "set title " << GnuplotString(title) << "\n";
  if (ys.size() == 1) gp << "set ylabel " << GnuplotString(cols[ys[0] - 1]) << "\n";
  const std::string data = GnuplotString(fs::absolute(csv_path).string());
  gp << "plot ";
  for (size_t k = 0; k < ys.size(); ++k)
    gp << (k ? ", " : "") << "(" << data << ") using " << xi << ":" << ys[k]
       << " every ::1 with lines lw 2 title " << GnuplotString(cols[ys[k] - 1]);
  Render(out_path, terminal, gp.str());
}

void PlotBode(const std::string& csv_path, const std::string& out_path, const std::string& title,
              const BodeMarks* marks) {
  namespace fs = std::filesystem;
  const auto cols = ReadHeader(csv_path);
  const int w = IndexOf(cols, "omega", csv_path), mag = IndexOf(cols, "magnitude_db", csv_path),
            phase = IndexOf(cols, "phase_deg", csv_path);
  const std::string terminal = Terminal(out_path);
  const std::string data = GnuplotString(fs::absolute(csv_path).string());
  // A margin's mark: a vertical line at its crossover in both plots, its
  // value written in the plot where it is read (the phase margin in the
  // phase plot, the gain margin in the magnitude plot). Only numbers paynter
  // formats go into the script.
  std::ostringstream mag_marks, phase_marks;
  if (marks) {
    int label = 1;
    auto line = [&](std::ostringstream& os, double x) {
      os << fmt::format("set arrow from {:.17g}, graph 0 to {:.17g}, graph 1 nohead dt 2 lc rgb 'gray40'\n", x, x);
    };
    mag_marks << "set arrow from graph 0, first 0 to graph 1, first 0 nohead dt 3 lc rgb 'red'\n";
    for (double ph : marks->phase_lines)
      phase_marks << fmt::format("set arrow from graph 0, first {:.17g} to graph 1, first {:.17g} nohead dt 3 lc rgb 'red'\n",
                                 ph, ph);
    double y = 0.92;
    for (const auto& [wc, pm] : marks->gain_crossovers) {
      line(mag_marks, wc);
      line(phase_marks, wc);
      phase_marks << fmt::format("set label {} 'PM {:.4g} deg at {:.4g} rad/s' at {:.17g}, graph {:.3g} offset 1,0\n",
                                 label++, pm, wc, wc, y);
      y -= 0.1;
    }
    y = 0.92;
    for (const auto& [wp, gm] : marks->phase_crossovers) {
      line(mag_marks, wp);
      line(phase_marks, wp);
      mag_marks << fmt::format("set label {} 'GM {:.4g} dB at {:.4g} rad/s' at {:.17g}, graph {:.3g} offset 1,0\n",
                               label++, gm, wp, wp, y);
      y -= 0.1;
    }
  }
  std::ostringstream gp;
  gp << "set datafile separator ','\n"
     << "set logscale x\n"
     << "set grid xtics mxtics ytics\n"
     << "set key off\n"
     << "set multiplot layout 2,1 title " << GnuplotString(title) << "\n"
     << "set ylabel 'magnitude (dB)'\n"
     << mag_marks.str()
     << "plot (" << data << ") using " << w << ":" << mag << " every ::1 with lines lw 2\n"
     << "unset arrow\nunset label\n"
     << "set ylabel 'phase (deg)'\n"
     << "set xlabel 'angular frequency (rad/s)'\n"
     << phase_marks.str()
     << "plot (" << data << ") using " << w << ":" << phase << " every ::1 with lines lw 2\n"
     << "unset multiplot";
  Render(out_path, terminal, gp.str());
}

}  // namespace paynter
