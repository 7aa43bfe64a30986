#pragma once
// The umbrella header: everything a user of dl4cpp needs. Individual headers live under
// <dl4cpp/nn/...>, <dl4cpp/iterators/...>, <dl4cpp/parallel/...>.
#include <dl4cpp/config.h>
#include <dl4cpp/iterators/AsyncDataSetIterator.h>
#include <dl4cpp/iterators/CSVRecordReader.h>
#include <dl4cpp/iterators/DataSet.h>
#include <dl4cpp/iterators/DataSetIterator.h>
#include <dl4cpp/iterators/FileSplit.h>
#include <dl4cpp/iterators/InputSplit.h>
#include <dl4cpp/iterators/ListDataSetIterator.h>
#include <dl4cpp/iterators/MnistDataSetIterator.h>
#include <dl4cpp/iterators/RankShardIterator.h>
#include <dl4cpp/iterators/RecordReaderDataSetIterator.h>
#include <dl4cpp/iterators/image/ImageDataSetIterator.h>
#include <dl4cpp/iterators/image/ImageRecordReader.h>
#include <dl4cpp/iterators/image/LabeledFileSplit.h>
#include <dl4cpp/iterators/image/NativeImageLoader.h>
#include <dl4cpp/iterators/image/PatternPathLabelGenerator.h>
#include <dl4cpp/nn/Error.h>
#include <dl4cpp/nn/backend/cpu/CpuIsa.h>
#include <dl4cpp/nn/conf/NeuralNetConfiguration.h>
#include <dl4cpp/nn/conf/layers/ActivationLayer.h>
#include <dl4cpp/nn/conf/layers/BatchNormalization.h>
#include <dl4cpp/nn/conf/layers/ConvolutionLayer.h>
#include <dl4cpp/nn/conf/layers/DenseLayer.h>
#include <dl4cpp/nn/conf/layers/DropoutLayer.h>
#include <dl4cpp/nn/conf/layers/OutputLayer.h>
#include <dl4cpp/nn/conf/layers/SubsamplingLayer.h>
// Global pooling, local response normalisation, zero padding and the loss layer.
#include <dl4cpp/nn/conf/layers/GlobalPoolingLayer.h>
#include <dl4cpp/nn/conf/layers/LocalResponseNormalization.h>
#include <dl4cpp/nn/conf/layers/LossLayer.h>
#include <dl4cpp/nn/conf/layers/ZeroPaddingLayer.h>
#include <dl4cpp/nn/eval/Evaluation.h>
#include <dl4cpp/nn/gradientcheck/GradientCheckUtil.h>
#include <dl4cpp/nn/listeners/EvaluativeListener.h>
#include <dl4cpp/nn/listeners/ProgressListener.h>
#include <dl4cpp/nn/listeners/ScoreIterationListener.h>
#include <dl4cpp/nn/multilayer/MultiLayerNetwork.h>
#include <dl4cpp/nn/profiling/LayerProfiler.h>
#include <dl4cpp/nn/tensor/Tensor.h>
#include <dl4cpp/nn/transferlearning/FineTuneConfiguration.h>
#include <dl4cpp/nn/transferlearning/TransferLearning.h>
#include <dl4cpp/nn/updaters/Updaters.h>
#include <dl4cpp/nn/util/ModelSerializer.h>
#include <dl4cpp/nn/util/OutputPath.h>
#include <dl4cpp/parallel/InferenceErrors.h>
#include <dl4cpp/parallel/ParallelInference.h>
#include <dl4cpp/parallel/ParallelWrapper.h>
#include <dl4cpp/parallel/cluster/InProcessCluster.h>
#include <dl4cpp/parallel/cluster/MpiCluster.h>
// Image augmentation: DataVec's image transforms and a pipeline with a probability per step.
#include <dl4cpp/iterators/image/transform/BrightnessContrastTransform.h>
#include <dl4cpp/iterators/image/transform/CropImageTransform.h>
#include <dl4cpp/iterators/image/transform/FlipImageTransform.h>
#include <dl4cpp/iterators/image/transform/PipelineImageTransform.h>
#include <dl4cpp/iterators/image/transform/RandomCropTransform.h>
#include <dl4cpp/iterators/image/transform/RotateImageTransform.h>
#include <dl4cpp/iterators/image/transform/ScaleImageTransform.h>
#include <dl4cpp/iterators/image/transform/TranslateImageTransform.h>
// Normalizers: fitted on training data, applied by iterators, ParallelInference and model files.
#include <dl4cpp/iterators/DataNormalization.h>
#include <dl4cpp/iterators/ImagePreProcessingScaler.h>
#include <dl4cpp/iterators/NormalizerMinMaxScaler.h>
#include <dl4cpp/iterators/NormalizerStandardize.h>
#include <dl4cpp/nn/util/NormalizerSerializer.h>
// Validation and early stopping (DL4J's org.deeplearning4j.earlystopping).
#include <dl4cpp/nn/earlystopping/EarlyStoppingConfiguration.h>
#include <dl4cpp/nn/earlystopping/EarlyStoppingResult.h>
#include <dl4cpp/nn/earlystopping/saver/InMemoryModelSaver.h>
#include <dl4cpp/nn/earlystopping/saver/LocalFileModelSaver.h>
#include <dl4cpp/nn/earlystopping/scorecalc/ClassificationScoreCalculator.h>
#include <dl4cpp/nn/earlystopping/scorecalc/DataSetLossCalculator.h>
#include <dl4cpp/nn/earlystopping/termination/BestScoreEpochTerminationCondition.h>
#include <dl4cpp/nn/earlystopping/termination/InvalidScoreIterationTerminationCondition.h>
#include <dl4cpp/nn/earlystopping/termination/MaxEpochsTerminationCondition.h>
#include <dl4cpp/nn/earlystopping/termination/MaxScoreIterationTerminationCondition.h>
#include <dl4cpp/nn/earlystopping/termination/MaxTimeIterationTerminationCondition.h>
#include <dl4cpp/nn/earlystopping/termination/ScoreImprovementEpochTerminationCondition.h>
#include <dl4cpp/nn/earlystopping/trainer/EarlyStoppingTrainer.h>
#include <dl4cpp/parallel/EarlyStoppingParallelTrainer.h>

// Training statistics: StatsListener records a run into a StatsStorage, HtmlReport writes it as a
// self-contained page. The live training page, UIServer, is <dl4cpp/ui/UIServer.h> in the library
// dl4cpp::dl4cpp_ui (it needs cpp-httplib).
#include <dl4cpp/nn/listeners/HtmlReport.h>
#include <dl4cpp/nn/listeners/StatsListener.h>
#include <dl4cpp/nn/listeners/StatsStorage.h>
