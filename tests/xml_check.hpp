// Well-formedness of XML, checked by a real parser (expat), for the SVG tests: a file a browser
// refuses to parse must fail here first.
#pragma once

#include <expat.h>

#include <map>
#include <string>

namespace attn::testing {

struct XmlCheck {
  std::string error;                 // "" when the document is well-formed
  std::string root;                  // the first element's name
  std::map<std::string, int> count;  // elements by name
};

inline XmlCheck check_xml(const std::string& doc) {
  XmlCheck result;
  XML_Parser parser = XML_ParserCreate("UTF-8");
  XML_SetUserData(parser, &result);
  XML_SetStartElementHandler(parser, [](void* data, const XML_Char* name, const XML_Char**) {
    auto* r = static_cast<XmlCheck*>(data);
    if (r->root.empty()) r->root = name;
    ++r->count[name];
  });
  if (XML_Parse(parser, doc.data(), static_cast<int>(doc.size()), 1) == XML_STATUS_ERROR) {
    result.error = "line " + std::to_string(XML_GetCurrentLineNumber(parser)) + ": " +
                   XML_ErrorString(XML_GetErrorCode(parser));
  }
  XML_ParserFree(parser);
  return result;
}

}  // namespace attn::testing
