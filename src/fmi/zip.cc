// fmi/zip.cc — a ZIP archive (PKWARE's APPNOTE: local headers, the central
// directory, its end record) with every file stored uncompressed, which is
// all an FMU needs. Times are fixed (1980-01-01), so the same files give the
// same bytes.
#include <array>
#include <cstdint>

#include "fmu.h"
#include "paynter/error.h"

namespace paynter::fmi {
namespace {

uint32_t Crc32(const std::string& data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void U16(std::string& out, uint32_t v) {
  out += static_cast<char>(v & 0xFF);
  out += static_cast<char>((v >> 8) & 0xFF);
}
void U32(std::string& out, uint32_t v) {
  U16(out, v & 0xFFFF);
  U16(out, v >> 16);
}

}  // namespace

std::string ZipArchive(const std::vector<std::pair<std::string, std::string>>& files) {
  constexpr uint32_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
  std::string out, central;
  for (const auto& [name, data] : files) {
    if (data.size() >= 0xFFFFFFFFu || out.size() >= 0xFFFFFFFFu || name.size() > 0xFFFF)
      throw Error("the FMU is too large for a ZIP archive without the ZIP64 extension");
    const uint32_t crc = Crc32(data), size = static_cast<uint32_t>(data.size());
    const uint32_t offset = static_cast<uint32_t>(out.size());
    const bool executable = name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0;
    U32(out, 0x04034b50);  // local file header
    U16(out, 20);          // version needed: 2.0
    U16(out, 0);           // flags
    U16(out, 0);           // method: stored
    U16(out, 0);           // time
    U16(out, kDosDate);
    U32(out, crc);
    U32(out, size);
    U32(out, size);
    U16(out, static_cast<uint32_t>(name.size()));
    U16(out, 0);  // extra field
    out += name;
    out += data;
    U32(central, 0x02014b50);  // central directory header
    U16(central, (3 << 8) | 20);  // made by: Unix, 2.0
    U16(central, 20);
    U16(central, 0);
    U16(central, 0);
    U16(central, 0);
    U16(central, kDosDate);
    U32(central, crc);
    U32(central, size);
    U32(central, size);
    U16(central, static_cast<uint32_t>(name.size()));
    U16(central, 0);  // extra
    U16(central, 0);  // comment
    U16(central, 0);  // disk
    U16(central, 0);  // internal attributes
    U32(central, static_cast<uint32_t>(executable ? 0100755 : 0100644) << 16);  // Unix mode
    U32(central, offset);
    central += name;
  }
  const uint32_t dir_offset = static_cast<uint32_t>(out.size());
  out += central;
  U32(out, 0x06054b50);  // end of central directory
  U16(out, 0);
  U16(out, 0);
  U16(out, static_cast<uint32_t>(files.size()));
  U16(out, static_cast<uint32_t>(files.size()));
  U32(out, static_cast<uint32_t>(central.size()));
  U32(out, dir_offset);
  U16(out, 0);
  return out;
}

}  // namespace paynter::fmi
