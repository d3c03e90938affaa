# `cmake --install build --prefix P`: the paynter program (P/bin), the static
# libraries of the stages (P/lib), the public headers (P/include/paynter) and
# a CMake package (P/lib/cmake/paynter), so that another project does
#   find_package(paynter REQUIRED)
#   target_link_libraries(app PRIVATE paynter::paynter)
# (docs/cpp-api.md). The exported targets carry their dependencies; the
# package's config finds them again (paynterConfig.cmake.in).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PAYNTER_LIBRARIES paynter_core paynter_model paynter_multibody paynter_causality paynter_structure paynter_codegen
    paynter_equations paynter_solvers paynter_report paynter_simulation paynter_constrained paynter_pipeline
    paynter_report_html paynter_fmi paynter_linear paynter)
install(TARGETS ${PAYNTER_LIBRARIES} EXPORT paynterTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS paynter_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Sweeps' HDF5 and MPI (src/sweep/io_module.h), where the program looks: <bin>/../<libdir>/paynter.
install(TARGETS paynter_sweep_io LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/paynter)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/paynter DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
# The data the program reads at run time, in P/share/paynter (src/model/data_dir.h):
# the component library (lib:...) and the report page's script, style and npm
# libraries (the files html_report.cc inlines, with their licences; node_modules
# is there after scripts/setup.sh's `npm ci`, and `paynter report` says so when not).
set(PAYNTER_DATA_DIR ${CMAKE_INSTALL_DATADIR}/paynter)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/library DESTINATION ${PAYNTER_DATA_DIR})
install(FILES ${PROJECT_SOURCE_DIR}/web/report.js ${PROJECT_SOURCE_DIR}/web/report.css ${PROJECT_SOURCE_DIR}/web/svg.js
              ${PROJECT_SOURCE_DIR}/web/equations.js ${PROJECT_SOURCE_DIR}/web/view3d.js ${PROJECT_SOURCE_DIR}/web/view3d.css
              ${PROJECT_SOURCE_DIR}/web/studio.js ${PROJECT_SOURCE_DIR}/web/studio.css DESTINATION ${PAYNTER_DATA_DIR}/web)
set(PAYNTER_NPM ${PROJECT_SOURCE_DIR}/web/node_modules)
install(DIRECTORY ${PAYNTER_NPM}/uplot/dist DESTINATION ${PAYNTER_DATA_DIR}/web/node_modules/uplot OPTIONAL
        FILES_MATCHING PATTERN "uPlot.iife.min.js" PATTERN "uPlot.min.css")
install(DIRECTORY ${PAYNTER_NPM}/katex/dist DESTINATION ${PAYNTER_DATA_DIR}/web/node_modules/katex OPTIONAL
        FILES_MATCHING PATTERN "katex.min.js" PATTERN "katex.min.css" PATTERN "*.woff2" PATTERN "contrib" EXCLUDE)
# The studio's editor (src/studio/api.cc inlines these).
install(DIRECTORY ${PAYNTER_NPM}/codemirror DESTINATION ${PAYNTER_DATA_DIR}/web/node_modules OPTIONAL
        FILES_MATCHING PATTERN "LICENSE" PATTERN "codemirror.js" PATTERN "codemirror.css" PATTERN "yaml.js"
        PATTERN "show-hint.js" PATTERN "show-hint.css" PATTERN "src" EXCLUDE PATTERN "bin" EXCLUDE)
install(FILES ${PAYNTER_NPM}/uplot/LICENSE DESTINATION ${PAYNTER_DATA_DIR}/web/node_modules/uplot OPTIONAL)
install(FILES ${PAYNTER_NPM}/katex/LICENSE DESTINATION ${PAYNTER_DATA_DIR}/web/node_modules/katex OPTIONAL)

set(PAYNTER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/paynter)
install(EXPORT paynterTargets NAMESPACE paynter:: DESTINATION ${PAYNTER_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/paynterConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/paynterConfig.cmake INSTALL_DESTINATION ${PAYNTER_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/paynterConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/paynterConfig.cmake ${PROJECT_BINARY_DIR}/paynterConfigVersion.cmake
        DESTINATION ${PAYNTER_CMAKE_DIR})

# The package as another project sees it: install, build examples/cpp/ against
# it outside the tree, run it (tests/cpp_package_test.sh). The sanitizer builds'
# libraries need their runtime flags, which an outside project does not pass.
if(PAYNTER_BUILD_TESTS AND NOT PAYNTER_SANITIZE AND NOT PAYNTER_FUZZ)
  add_test(NAME cpp_package COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cpp_package_test.sh ${PROJECT_SOURCE_DIR}
                                    ${PROJECT_BINARY_DIR})
  set_tests_properties(cpp_package PROPERTIES TIMEOUT 600)
endif()
